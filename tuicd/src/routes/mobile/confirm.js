"use strict";
// The ui tool's confirms on the phone: one modal at a time, answered with POST /ui/confirm/:id.
// A classic script loaded before app.js; it reads app.js's state and helpers only when called.

function addConfirm(request) {
  if (app.confirms.has(request.id)) return;
  app.confirms.set(request.id, request);
  if (request.expires_in_ms) setTimeout(() => dropConfirm(request.id), request.expires_in_ms);
  showConfirm();
}

function dropConfirm(id) {
  app.confirms.delete(id);
  if (app.showing === id) {
    app.showing = null;
    $("confirm").close();
    showConfirm();
  }
}

function showConfirm() {
  if (app.showing || !app.confirms.size) return;
  const [request] = app.confirms.values();
  app.showing = request.id;
  $("confirm-who").textContent = `${request.requester} asks`;
  $("confirm-title").textContent = request.title;
  // The message whole, as text: the daemon has already made runs and control characters visible.
  const message = $("confirm-message");
  message.textContent = request.message;
  $("confirm").showModal();
  message.scrollTop = 0;
}

async function answer(confirmed) {
  const id = app.showing;
  if (!id) return;
  try {
    await api("POST", `/ui/confirm/${enc(id)}`, { confirmed });
  } catch (error) {
    // Another client answered first (409) or it expired (404): either way it is settled.
    if (error.status !== 404 && error.status !== 409) failed(error);
  }
  dropConfirm(id);
}

async function loadConfirms() {
  try {
    for (const request of (await api("GET", "/ui/confirms")).confirms) addConfirm(request);
  } catch (error) {
    failed(error);
  }
}
