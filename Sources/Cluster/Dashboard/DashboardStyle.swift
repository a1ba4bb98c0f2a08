/// The dashboard's style sheet (`/dashboard.css`): light and dark, readable on a phone (cards wrap,
/// tables scroll sideways, secondary columns hide on narrow screens).
enum DashboardStyle {
    static let css = #"""
        :root {
          --bg: #f5f6f8; --panel: #ffffff; --text: #1d2330; --muted: #6b7385; --line: #e3e6ec;
          --accent: #3b5bdb; --ok: #2f9e44; --bad: #e03131; --warn: #f08c00; --idle: #adb5bd; --track: #e9ecef;
          font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif; font-size: 15px;
        }
        @media (prefers-color-scheme: dark) {
          :root { --bg: #111418; --panel: #1a1f26; --text: #e6e8ec; --muted: #8b93a3; --line: #2a313b;
                  --accent: #7c93ff; --track: #2a313b; }
        }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--bg); color: var(--text); line-height: 1.4; }
        a { color: var(--accent); text-decoration: none; }
        a:hover { text-decoration: underline; }
        .muted { color: var(--muted); font-weight: normal; font-size: 0.85em; }
        header.top { display: flex; align-items: center; gap: 12px; padding: 10px 20px; background: var(--panel);
                     border-bottom: 1px solid var(--line); position: sticky; top: 0; z-index: 1; flex-wrap: wrap; }
        .brand { font-weight: 700; font-size: 1.15em; color: var(--text); display: flex; align-items: center; gap: 8px; }
        .logo { width: 18px; height: 18px; border-radius: 5px;
                background: linear-gradient(180deg, var(--accent) 0 30%, #a5b4fc 30% 70%, var(--accent) 70%); }
        #coordinator { flex: 1; }
        .pill { font-size: 0.8em; padding: 2px 10px; border-radius: 999px; background: var(--track); color: var(--muted); }
        .pill[data-state="live"] { background: #d3f9d8; color: #2b8a3e; }
        .pill[data-state="reconnecting"] { background: #fff3bf; color: #e67700; }
        @media (prefers-color-scheme: dark) {
          .pill[data-state="live"] { background: #1e3a26; color: #8ce99a; }
          .pill[data-state="reconnecting"] { background: #3d3212; color: #ffd43b; }
        }
        main { max-width: 1200px; margin: 0 auto; padding: 16px 20px 8px; }
        h1 { font-size: 1.4em; margin: 4px 0 12px; word-break: break-all; }
        h2 { font-size: 1.05em; margin: 0 0 10px; }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(135px, 1fr)); gap: 10px; margin-bottom: 14px; }
        .card { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 10px 14px; }
        .card .value { font-size: 1.5em; font-weight: 650; font-variant-numeric: tabular-nums; }
        .card .label { color: var(--muted); font-size: 0.8em; text-transform: uppercase; letter-spacing: 0.04em; }
        .card.bad .value { color: var(--bad); }
        .panel { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; margin-bottom: 14px; }
        .scroll { overflow-x: auto; }
        table { width: 100%; border-collapse: collapse; font-variant-numeric: tabular-nums; }
        th { text-align: left; color: var(--muted); font-weight: 600; font-size: 0.8em; text-transform: uppercase;
             letter-spacing: 0.04em; padding: 6px 10px; border-bottom: 1px solid var(--line); white-space: nowrap; }
        td { padding: 7px 10px; border-bottom: 1px solid var(--line); vertical-align: middle; }
        tr:last-child td { border-bottom: none; }
        td.num, th.num { text-align: right; }
        td.nowrap { white-space: nowrap; }
        td.id { font-family: ui-monospace, "SF Mono", Menlo, monospace; font-size: 0.9em; word-break: break-all; }
        td.source { word-break: break-all; max-width: 420px; }
        td.error { color: var(--bad); word-break: break-word; max-width: 360px; }
        td.empty { color: var(--muted); text-align: center; padding: 18px; }
        .progress { display: flex; height: 8px; border-radius: 4px; overflow: hidden; background: var(--track); min-width: 90px; }
        .progress.big { height: 12px; margin-bottom: 14px; }
        .progress span { display: block; height: 100%; }
        .seg-succeeded { background: var(--ok); } .seg-failed { background: var(--bad); }
        .seg-cancelled { background: var(--idle); } .seg-running { background: var(--accent); }
        .load { display: flex; align-items: center; gap: 8px; }
        .load .progress { flex: 1; max-width: 120px; }
        .badge { display: inline-block; font-size: 0.78em; font-weight: 600; padding: 1px 8px; border-radius: 999px;
                 background: var(--track); color: var(--muted); }
        .badge.succeeded { background: #d3f9d8; color: #2b8a3e; } .badge.failed { background: #ffe3e3; color: #c92a2a; }
        .badge.running { background: #dbe4ff; color: #3b5bdb; } .badge.cancelled { background: var(--track); color: var(--muted); }
        @media (prefers-color-scheme: dark) {
          .badge.succeeded { background: #1e3a26; color: #8ce99a; } .badge.failed { background: #4a1d1d; color: #ffa8a8; }
          .badge.running { background: #1f2a52; color: #a5b4fc; }
        }
        .thumb { width: 64px; height: 48px; object-fit: cover; border-radius: 6px; background: var(--track); display: block; }
        .filters { display: flex; gap: 6px; flex-wrap: wrap; margin-bottom: 8px; }
        .filters button { font: inherit; font-size: 0.85em; border: 1px solid var(--line); background: var(--panel); color: var(--text);
                          border-radius: 999px; padding: 3px 12px; cursor: pointer; }
        .filters button[aria-pressed="true"] { background: var(--accent); border-color: var(--accent); color: #fff; }
        .chart svg { width: 100%; height: auto; display: block; }
        .chart .grid { stroke: var(--line); stroke-width: 1; }
        .chart .tps { fill: none; stroke: var(--accent); stroke-width: 2; }
        .chart .tps-area { fill: var(--accent); opacity: 0.12; }
        .chart .queue { fill: none; stroke: var(--warn); stroke-width: 1.5; stroke-dasharray: 4 3; }
        .chart text { fill: var(--muted); font-size: 12px; }
        .legend { display: flex; gap: 16px; font-size: 0.8em; color: var(--muted); margin-top: 4px; }
        .legend i { display: inline-block; width: 14px; height: 3px; vertical-align: middle; margin-right: 5px; }
        .error-box { background: #fff5f5; border: 1px solid #ffc9c9; color: #c92a2a; padding: 10px 14px; border-radius: 8px; }
        main.notice { max-width: 640px; }
        main.notice code { background: var(--track); padding: 1px 5px; border-radius: 4px; }
        footer { text-align: center; color: var(--muted); font-size: 0.8em; padding: 10px 0 24px; }
        @media (max-width: 640px) {
          main { padding: 12px 10px; }
          header.top { padding: 8px 12px; }
          .wide { display: none; }
          .cards { grid-template-columns: repeat(3, 1fr); gap: 8px; }
          .card { padding: 8px 10px; }
          .card .value { font-size: 1.2em; }
          .card .label { font-size: 0.7em; }
          .chart text { font-size: 24px; }
          td, th { padding: 6px 6px; }
        }
        """#
}
