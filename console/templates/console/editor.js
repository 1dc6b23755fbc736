// The editor's live check: while an admin types, post the form (as the Check button does) and show the
// validator's problems at their lines and the diff. Without JavaScript the Check button does the same.
(function () {
  "use strict";
  const form = document.querySelector("form.editor");
  if (!form) return;
  let timer = null;
  let sent = 0;

  function findingsList(findings) {
    const section = document.getElementById("findings") || document.createElement("section");
    section.id = "findings";
    section.className = "card";
    const problems = findings.filter((f) => !f.warning).length;
    const heading = document.createElement("h2");
    heading.textContent = problems
      ? `${problems} problem${problems === 1 ? "" : "s"}: a deploy would be refused`
      : "No problems: this deploys";
    const list = document.createElement("ul");
    for (const f of findings) {
      const item = document.createElement("li");
      item.className = `finding ${f.warning ? "warning" : "error"}`;
      item.dataset.line = String(f.line);
      const where = document.createElement("a");
      where.href = "#file-app-json";
      where.textContent = `app.json line ${f.line}`;
      const pointer = document.createElement("code");
      pointer.textContent = f.pointer;
      item.append(where, " ", pointer, `: ${f.message}${f.warning ? " (warning)" : ""}`);
      list.append(item);
    }
    section.replaceChildren(heading, list);
    if (!section.parentNode) form.before(section);
  }

  async function check() {
    const mine = ++sent;
    const body = new FormData(form);
    body.set("action", "check");
    // form.action would be the buttons named "action": read the attribute.
    const answer = await fetch(form.getAttribute("action"), {
      method: "POST",
      body,
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    });
    if (!answer.ok || mine !== sent) return;
    const data = await answer.json();
    findingsList(data.findings);
    const diff = document.getElementById("diff");
    if (diff) diff.textContent = data.diff || "None.";
    form.dispatchEvent(new Event("editor:findings")); // code_editor.js shows them in the editor too
  }

  form.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(check, 500);
  });
})();
