"use strict";
// Keys as the bytes a terminal sends, for the phone's key row (a classic script: term.js uses it).
// A phone's keyboard has no Esc, Tab, arrows or Ctrl; the row under the terminal has them, and
// Ctrl is sticky: tapped, it applies to the next key typed or tapped.

// The key row, in order: [label, key name, accessible name].
const KEY_ROW = [
  ["Esc", "Escape", "Escape"],
  ["Tab", "Tab", "Tab"],
  ["Ctrl", "Control", "Control (applies to the next key)"],
  ["\u2190", "ArrowLeft", "Left"],
  ["\u2191", "ArrowUp", "Up"],
  ["\u2193", "ArrowDown", "Down"],
  ["\u2192", "ArrowRight", "Right"],
  ["PgUp", "PageUp", "Page up"],
  ["PgDn", "PageDown", "Page down"],
  ["Home", "Home", "Home"],
  ["End", "End", "End"],
];

const CURSOR_FINAL = { ArrowUp: "A", ArrowDown: "B", ArrowRight: "C", ArrowLeft: "D", Home: "H", End: "F" };

/**
 * The bytes a key of the row sends, as xterm sends them: `application` is the terminal's cursor
 * key mode (DECCKM, set by full-screen programs), `ctrl` the sticky modifier.
 */
function keyBytes(key, application, ctrl) {
  const final = CURSOR_FINAL[key];
  if (final) {
    if (ctrl) return `\x1b[1;5${final}`;
    return (application ? "\x1bO" : "\x1b[") + final;
  }
  if (key === "PageUp") return ctrl ? "\x1b[5;5~" : "\x1b[5~";
  if (key === "PageDown") return ctrl ? "\x1b[6;5~" : "\x1b[6~";
  if (key === "Tab") return "\t";
  if (key === "Escape") return "\x1b";
  return "";
}

/**
 * Ctrl applied to typed text, as a terminal does: a letter or one of @[\]^_ becomes its control
 * byte, space NUL, ? DEL; the rest of the text (a phone keyboard may type a whole word) is kept.
 */
function withCtrl(data) {
  if (!data) return data;
  const first = data[0];
  const code = first.toUpperCase().charCodeAt(0);
  let control = null;
  if (code >= 0x40 && code <= 0x5f) control = String.fromCharCode(code & 0x1f);
  else if (first === " ") control = "\x00";
  else if (first === "?") control = "\x7f";
  return control === null ? data : control + data.slice(1);
}
