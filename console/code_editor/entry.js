// What the console's app editor (console/templates/console/code_editor.js) takes from CodeMirror 6:
// one ES module, bundled by .ci/build-editor. Add an export here, then rebuild; never edit the bundle.
export { EditorState } from "@codemirror/state";
export {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  hoverTooltip,
  keymap,
  lineNumbers,
} from "@codemirror/view";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export {
  bracketMatching,
  defaultHighlightStyle,
  foldGutter,
  foldKeymap,
  indentOnInput,
  syntaxHighlighting,
  syntaxTree,
} from "@codemirror/language";
export { json } from "@codemirror/lang-json";
export { python } from "@codemirror/lang-python";
export { html } from "@codemirror/lang-html";
export { css } from "@codemirror/lang-css";
export { javascript } from "@codemirror/lang-javascript";
export { forEachDiagnostic, lintGutter, lintKeymap, setDiagnostics } from "@codemirror/lint";
export {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
  startCompletion,
} from "@codemirror/autocomplete";
