// Follow an agent run's event stream; reload to show each new step, and stop once the run ends or pauses.
// Served by the platform (no inline script); the page names the stream and the status it shows.
(function () {
  "use strict";
  const follow = document.getElementById("run-follow");
  if (!follow) return;
  const events = new EventSource(follow.dataset.events);
  events.addEventListener("step", () => {
    events.close();
    location.reload();
  });
  events.addEventListener("status", (e) => {
    if (JSON.parse(e.data).status !== follow.dataset.status) {
      events.close();
      location.reload();
    }
  });
})();
