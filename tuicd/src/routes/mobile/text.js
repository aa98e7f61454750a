"use strict";
// Terminal output as text for the phone page (a classic script: app.js uses TextScreen).

// Lines kept on screen, and the history read when a session opens.
const MAX_LINES = 2000;

// Terminal output as plain lines: escape sequences dropped, CR returns to the line start, LF
// starts a line. Full-screen programs come out garbled, but an agent's transcript reads well.
const ESCAPE = /\x1b(?:\][^\x07\x1b]*(?:\x07|\x1b\\)|\[[0-?]*[ -/]*[@-~]|[P^_X][^\x1b]*\x1b\\|[()*+].|[ -/]*[0-OQ-WYZ\\`-~])/g;
const WHOLE_ESCAPE = new RegExp(`^(?:${ESCAPE.source})`);

class TextScreen {
  constructor(text) {
    this.lines = text ? text.split("\n") : [""];
    this.col = this.lines[this.lines.length - 1].length;
    this.held = "";
  }

  feed(data) {
    data = this.held + data;
    this.held = "";
    const esc = data.lastIndexOf("\x1b");
    // An escape sequence cut by the frame boundary waits for its end (bounded, in case it never comes).
    if (esc >= 0 && !WHOLE_ESCAPE.test(data.slice(esc)) && data.length - esc < 4096) {
      this.held = data.slice(esc);
      data = data.slice(0, esc);
    }
    for (const part of data.replace(ESCAPE, "").split(/([\n\r\b\t])/)) {
      if (part === "\n") {
        this.lines.push("");
        this.col = 0;
      } else if (part === "\r") this.col = 0;
      else if (part === "\b") this.col = Math.max(0, this.col - 1);
      else if (part === "\t") this.tab();
      else if (part) this.put(part.replace(/[\x00-\x1f\x7f]/g, ""));
    }
    if (this.lines.length > MAX_LINES) this.lines.splice(0, this.lines.length - MAX_LINES);
  }

  put(text) {
    const last = this.lines.length - 1;
    const line = this.lines[last];
    this.lines[last] = line.slice(0, this.col).padEnd(this.col) + text + line.slice(this.col + text.length);
    this.col += text.length;
  }

  // A tab moves to the next stop of 8 and writes nothing over what it passes.
  tab() {
    const last = this.lines.length - 1;
    this.col += 8 - (this.col % 8);
    this.lines[last] = this.lines[last].padEnd(this.col);
  }

  text() {
    return this.lines.join("\n");
  }
}
