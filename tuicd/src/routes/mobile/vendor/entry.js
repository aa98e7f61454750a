// The one script the page loads for its terminal: xterm.js and its fit addon, as globals for the
// page's classic scripts (app.js, term.js). Bundled and minified by build.sh into ../xterm.js.
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";

window.Terminal = Terminal;
window.FitAddon = FitAddon;
