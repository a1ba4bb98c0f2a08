/// The dashboard's HTML: one page for the cluster and for a batch (the script shows one or the other by
/// the path), with no asset from elsewhere: its style sheet and script are `/dashboard.css` and
/// `/dashboard.js` of the same server (`DashboardStyle`, `DashboardScript`), so that the
/// Content-Security-Policy can forbid inline script.
enum DashboardPage {
    /// The page, with the first event's data embedded (as JSON in a non-executed `<script>` element),
    /// so that it shows the cluster at once, before its event stream connects.
    static func html(initialEvent json: String) -> String {
        """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>Shiftwork dashboard</title>
        <link rel="icon" href="data:,">
        <link rel="stylesheet" href="/dashboard.css">
        <script id="initial-event" type="application/json">\(embeddable(json))</script>
        <script src="/dashboard.js" defer></script>
        </head>
        <body>
        <header class="top">
          <a class="brand" href="/"><span class="logo" aria-hidden="true"></span>Shiftwork</a>
          <span id="coordinator" class="muted"></span>
          <span id="connection" class="pill" data-state="connecting">connecting…</span>
        </header>
        <main>
          <section id="cluster-view" hidden>
            <div class="cards" id="cluster-cards"></div>
            <section class="panel">
              <h2>Throughput <span class="muted">tasks/s and queued tasks, up to 10 minutes</span></h2>
              <div id="chart" class="chart"></div>
            </section>
            <section class="panel">
              <h2>Workers <span class="muted" id="worker-count"></span></h2>
              <div class="scroll"><table id="workers"></table></div>
            </section>
            <section class="panel">
              <h2>Batches <span class="muted" id="batch-count"></span></h2>
              <div class="scroll"><table id="batches"></table></div>
            </section>
          </section>
          <section id="batch-view" hidden>
            <p class="crumbs"><a href="/">← Cluster</a></p>
            <h1 id="batch-title"></h1>
            <div class="progress big" id="batch-progress"></div>
            <div class="cards" id="batch-cards"></div>
            <p id="batch-error" class="error-box" hidden></p>
            <section class="panel">
              <h2>Items <span class="muted" id="item-count"></span></h2>
              <div class="filters" id="filters"></div>
              <div class="scroll"><table id="items"></table></div>
              <p id="items-more" class="muted" hidden></p>
            </section>
          </section>
        </main>
        <footer>Read-only · live, every second · <a href="/api/status">status JSON</a> · <a href="/metrics">metrics</a></footer>
        </body>
        </html>
        """
    }

    /// `json` safe inside a `<script>` element: `<`, `>` and `&` as JSON escapes, so that no string
    /// from the network can close the element.
    static func embeddable(_ json: String) -> String {
        json.replacingOccurrences(of: "&", with: "\\u0026").replacingOccurrences(of: "<", with: "\\u003c")
            .replacingOccurrences(of: ">", with: "\\u003e")
    }
}
