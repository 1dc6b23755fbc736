// The app editor's code editor (progressive): each file's textarea becomes a CodeMirror 6 editor, JSON
// for app.json (completion and hover help from the manifest's JSON Schema), Python for handlers, HTML
// for screens. The textarea stays in the form, hidden and kept in step, so Check, Save and Deploy post
// what is shown. editor.js's live check (the deploy's validator) lists its findings on the page and
// says so ("editor:findings"); they are shown here as diagnostics at their line of app.json.
// Without JavaScript, or if this module cannot load, the textareas are the editor.
import * as cm from "{{ bundle_url }}";

const form = document.querySelector("form.editor");
const MANIFEST = "app.json";

// ---- The manifest schema: where a JSON path leads, what may be written there ----

function pointerTarget(root, ref) {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return {};
  let node = root;
  for (const part of ref.slice(2).split("/")) {
    node = node?.[decodeURIComponent(part).replaceAll("~1", "/").replaceAll("~0", "~")];
  }
  return node && typeof node === "object" ? node : {};
}

// A schema with its $ref followed (the referring schema's own words win, as "title" beside "$ref").
function resolved(schema, root) {
  for (let hops = 0; schema && typeof schema === "object" && schema.$ref && hops < 32; hops++) {
    const { $ref, ...own } = schema;
    schema = { ...pointerTarget(root, $ref), ...own };
  }
  return schema && typeof schema === "object" ? schema : {};
}

// The schemas a value must (or may) match: the schema and its allOf/anyOf/oneOf branches.
function branches(schema, root) {
  const found = [resolved(schema, root)];
  for (let i = 0; i < found.length && i < 64; i++) {
    for (const word of ["allOf", "anyOf", "oneOf"]) {
      for (const branch of found[i][word] || []) found.push(resolved(branch, root));
    }
  }
  return found;
}

function childSchemas(schemas, key, root) {
  const children = [];
  for (const schema of schemas) {
    if (typeof key === "number") {
      const item = schema.prefixItems?.[key] ?? schema.items;
      if (item && typeof item === "object") children.push(...branches(item, root));
      continue;
    }
    if (schema.properties && key in schema.properties) {
      children.push(...branches(schema.properties[key], root));
    } else if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      children.push(...branches(schema.additionalProperties, root));
    }
  }
  return children;
}

function schemasAt(root, path) {
  let schemas = branches(root, root);
  for (const key of path) schemas = childSchemas(schemas, key, root);
  return schemas;
}

function describe(schemas) {
  const title = schemas.map((s) => s.title).find(Boolean);
  const description = schemas.map((s) => s.description).find(Boolean);
  const facts = [];
  const type = schemas.map((s) => s.type).find(Boolean);
  if (type) facts.push(`type: ${[type].flat().join(" | ")}`);
  const choices = schemas.map((s) => s.enum).find(Boolean);
  if (choices) facts.push(`one of: ${choices.map((c) => JSON.stringify(c)).join(", ")}`);
  const fallback = schemas.find((s) => "default" in s);
  if (fallback) facts.push(`default: ${JSON.stringify(fallback.default)}`);
  const example = schemas.map((s) => s.examples?.[0]).find((e) => e !== undefined);
  if (example !== undefined) facts.push(`e.g. ${JSON.stringify(example)}`);
  return { title, description, facts };
}

function helpElement(key, schemas) {
  const { title, description, facts } = describe(schemas);
  if (!title && !description && !facts.length) return null;
  const box = document.createElement("div");
  box.className = "cm-schema-help";
  const heading = document.createElement("strong");
  heading.textContent = title ? `${key}: ${title}` : String(key);
  box.append(heading);
  for (const text of [description, facts.join(" · ")]) {
    if (!text) continue;
    const line = document.createElement("p");
    line.textContent = text;
    box.append(line);
  }
  return box;
}

// ---- Where the cursor is in app.json (from the JSON syntax tree) ----

const VALUES = new Set(["Object", "Array", "String", "Number", "True", "False", "Null"]);

function keyOf(state, property) {
  const name = property.getChild("PropertyName");
  if (!name) return null;
  try {
    return JSON.parse(state.sliceDoc(name.from, name.to));
  } catch {
    return null;
  }
}

// The JSON path (keys and indexes) of a node: the keys of the properties and the positions in the
// arrays that hold it.
function pathOf(state, node) {
  const path = [];
  for (let child = node, parent = node.parent; parent; child = parent, parent = parent.parent) {
    if (parent.name === "Property" && child.name !== "PropertyName") {
      const key = keyOf(state, parent);
      if (key !== null) path.unshift(key);
    } else if (parent.name === "Array") {
      let index = 0;
      for (let c = parent.firstChild; c && c.from < child.from; c = c.nextSibling) {
        if (VALUES.has(c.name)) index++;
      }
      path.unshift(index);
    }
  }
  return path;
}

// The object or array the position is written in (an unclosed one reaches to its end).
function containerAt(state, pos) {
  for (let node = cm.syntaxTree(state).resolveInner(pos, -1); node; node = node.parent) {
    if (node.name !== "Object" && node.name !== "Array") continue;
    const closed = node.lastChild && ["}", "]"].includes(node.lastChild.name);
    if (node.from < pos && (pos < node.to || (!closed && pos <= node.to))) return node;
  }
  return null;
}

function keysIn(state, object) {
  const keys = new Set();
  for (let c = object.firstChild; c; c = c.nextSibling) {
    if (c.name === "Property") keys.add(keyOf(state, c));
  }
  return keys;
}

// ---- Completion and hover help from the schema ----

function insertion(text) {
  // Replaces the typed word and a quote the editor closed by itself after it.
  return (view, _completion, from, to) => {
    const end = view.state.sliceDoc(to, to + 1) === '"' && text.endsWith('"') ? to + 1 : to;
    view.dispatch({ changes: { from, to: end, insert: text }, selection: { anchor: from + text.length } });
  };
}

function keyOptions(state, container, quoted, root) {
  const present = keysIn(state, container);
  const options = [];
  for (const schema of schemasAt(root, pathOf(state, container))) {
    for (const [key, sub] of Object.entries(schema.properties || {})) {
      if (present.has(key) || options.some((o) => o.displayLabel === key)) continue;
      const { title, description } = describe(branches(sub, root));
      const required = (schema.required || []).includes(key);
      options.push({
        label: quoted ? `"${key}` : key,
        displayLabel: key,
        detail: [required ? "required" : "", title || ""].filter(Boolean).join(" · "),
        info: description,
        type: "property",
        boost: required ? 1 : 0,
        apply: insertion(`${JSON.stringify(key)}: `),
      });
    }
  }
  return options;
}

function valueOptions(schemas) {
  const values = [];
  const defaults = schemas.filter((s) => "default" in s).map((s) => JSON.stringify(s.default));
  const add = (value) => {
    if (!values.some((v) => JSON.stringify(v) === JSON.stringify(value))) values.push(value);
  };
  for (const schema of schemas) {
    for (const value of schema.enum || []) add(value);
    if ("const" in schema) add(schema.const);
    if ("default" in schema) add(schema.default);
    for (const value of schema.examples || []) add(value);
    if ([schema.type].flat().includes("boolean")) [true, false].forEach(add);
  }
  return values.map((value) => ({
    label: JSON.stringify(value),
    type: typeof value === "string" ? "text" : "constant",
    boost: defaults.includes(JSON.stringify(value)) ? 1 : 0,
    apply: insertion(JSON.stringify(value)),
  }));
}

function schemaCompletion(root) {
  return (context) => {
    const textBefore = (pos) => context.state.sliceDoc(Math.max(0, pos - 2000), pos).trimEnd();
    // What is being typed: a quoted token up to the cursor, or a bare word (never the indentation),
    // where a key or a value starts (after "{", "[", "," or ":"; not the end of a string just closed).
    let word = context.matchBefore(/"[^"\n]*$|[\w$.-]+$/);
    if (!word || !"{[,:".includes(textBefore(word.from).slice(-1) || "?")) {
      word = { from: context.pos, to: context.pos, text: "" };
    }
    if (word.from === word.to && !context.explicit) return null;
    const container = containerAt(context.state, word.from);
    if (!container) return null;
    const before = textBefore(word.from);
    const last = before.slice(-1);
    let options = [];
    if (container.name === "Object" && (last === "{" || last === ",")) {
      options = keyOptions(context.state, container, word.text.startsWith('"'), root);
    } else if (container.name === "Object" && last === ":") {
      const key = before.match(/"((?:[^"\\]|\\.)*)"\s*:$/);
      if (key) options = valueOptions(schemasAt(root, [...pathOf(context.state, container), JSON.parse(`"${key[1]}"`)]));
    } else if (container.name === "Array" && (last === "[" || last === ",")) {
      let index = 0;
      for (let c = container.firstChild; c && c.to <= word.from; c = c.nextSibling) {
        if (VALUES.has(c.name)) index++;
      }
      options = valueOptions(schemasAt(root, [...pathOf(context.state, container), index]));
    }
    return options.length ? { from: word.from, options, validFor: /^"[^"\n]*$|^[\w$.-]*$/ } : null;
  };
}

function schemaHover(root) {
  return cm.hoverTooltip((view, pos, side) => {
    const node = cm.syntaxTree(view.state).resolveInner(pos, side);
    if (node.name !== "PropertyName" || !node.parent) return null;
    const key = keyOf(view.state, node.parent);
    const help = helpElement(key, schemasAt(root, [...pathOf(view.state, node.parent), key]));
    return help && { pos: node.from, end: node.to, above: true, create: () => ({ dom: help }) };
  });
}

// ---- The live check's findings as diagnostics ----

function diagnostics(state) {
  const found = [];
  for (const item of document.querySelectorAll("#findings li.finding")) {
    const number = Math.min(Math.max(Number(item.dataset.line) || 1, 1), state.doc.lines);
    const line = state.doc.line(number);
    const indent = line.text.length - line.text.trimStart().length;
    found.push({
      from: line.from + indent,
      to: line.to,
      severity: item.classList.contains("warning") ? "warning" : "error",
      source: "deploy check",
      message: item.textContent.trim().replace(/\s+/g, " ").replace(/^app\.json line \d+ /, ""),
    });
  }
  return found;
}

// ---- One editor per file ----

function language(path) {
  if (path.endsWith(".json")) return [cm.json()];
  if (path.endsWith(".py")) return [cm.python()];
  if (path.endsWith(".html")) return [cm.html()];
  if (path.endsWith(".js")) return [cm.javascript()];
  if (path.endsWith(".css")) return [cm.css()];
  return [];
}

const theme = cm.EditorView.theme({
  "&": { border: "1px solid #8a8f98", borderRadius: "4px", backgroundColor: "#fff", fontSize: "0.9rem" },
  "&.cm-focused": { outline: "2px solid #1f5fbf", outlineOffset: "1px" },
  // The cursor's line is marked only in the editor that has the focus.
  "&:not(.cm-focused) .cm-activeLine, &:not(.cm-focused) .cm-activeLineGutter": { backgroundColor: "transparent" },
  ".cm-scroller": { fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace", maxHeight: "36rem", overflow: "auto" },
  ".cm-content": { minHeight: "8rem" },
  ".cm-schema-help": { maxWidth: "32rem", padding: "0.4rem 0.6rem" },
  ".cm-schema-help p": { margin: "0.3rem 0 0" },
});

function enhance(textarea, schema, nonce) {
  const path = textarea.dataset.path;
  const manifest = path === MANIFEST;
  const label = document.querySelector(`label[for="${textarea.id}"]`);
  const extensions = [
    cm.lineNumbers(),
    cm.highlightActiveLineGutter(),
    cm.highlightSpecialChars(),
    cm.history(),
    cm.foldGutter(),
    cm.drawSelection(),
    cm.indentOnInput(),
    cm.syntaxHighlighting(cm.defaultHighlightStyle, { fallback: true }),
    cm.bracketMatching(),
    cm.closeBrackets(),
    cm.highlightActiveLine(),
    cm.keymap.of([
      ...cm.closeBracketsKeymap,
      ...cm.defaultKeymap,
      ...cm.historyKeymap,
      ...cm.foldKeymap,
      ...cm.completionKeymap,
      ...cm.lintKeymap,
      cm.indentWithTab, // Escape, then Tab, leaves the editor
    ]),
    cm.EditorView.cspNonce.of(nonce),
    cm.EditorView.contentAttributes.of({ "aria-label": path, "data-path": path }),
    theme,
    ...language(path),
    cm.EditorView.updateListener.of((update) => {
      if (!update.docChanged) return;
      textarea.value = update.state.doc.toString();
      form.dispatchEvent(new Event("input")); // editor.js checks the form as it does while typing
    }),
  ];
  if (manifest) {
    extensions.push(cm.lintGutter(), cm.autocompletion(schema ? { override: [schemaCompletion(schema)] } : {}));
    if (schema) extensions.push(schemaHover(schema));
  }
  const view = new cm.EditorView({ doc: textarea.value, extensions });
  textarea.hidden = true;
  textarea.after(view.dom);
  if (label) label.addEventListener("click", () => view.focus());
  return view;
}

async function start() {
  if (!form) return;
  const nonce = document.querySelector("style[nonce]")?.nonce || "";
  let schema = null;
  try {
    const answer = await fetch(form.dataset.schemaUrl, { credentials: "same-origin" });
    if (answer.ok) schema = await answer.json();
  } catch {
    schema = null; // the editor still works, without completion and hover help
  }
  let manifestView = null;
  for (const textarea of form.querySelectorAll("textarea[data-path]")) {
    const view = enhance(textarea, schema, nonce);
    if (textarea.dataset.path === MANIFEST) manifestView = view;
  }
  if (!manifestView) return;
  const show = () => manifestView.dispatch(cm.setDiagnostics(manifestView.state, diagnostics(manifestView.state)));
  form.addEventListener("editor:findings", show);
  show();
  // A finding's "app.json line N" link moves the cursor to that line.
  document.addEventListener("click", (event) => {
    const link = event.target.closest?.("#findings li.finding a");
    if (!link) return;
    event.preventDefault();
    const number = Math.min(Number(link.closest("li").dataset.line) || 1, manifestView.state.doc.lines);
    const line = manifestView.state.doc.line(number);
    manifestView.dispatch({ selection: { anchor: line.from }, scrollIntoView: true });
    manifestView.focus();
  });
  document.documentElement.dataset.codeEditor = "ready";
}

start();
