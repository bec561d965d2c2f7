extension HTMLReport {
    /// The page's only style: system fonts (nothing to download), a grid of cards that wraps from
    /// two columns at 1280 px to one on a phone.
    static let styleSheet = """

        :root { --ink: #1d2330; --dim: #667085; --line: #e3e6ec; --card: #fff; --page: #f4f5f8;
          --good: #16794c; --bad: #c0362c; --busy: #3b6fd8; --wait: #f0b429; }
        * { box-sizing: border-box; }
        body { margin: 0; background: var(--page); color: var(--ink);
          font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
        main, header.top, footer { max-width: 1320px; margin: 0 auto; padding: 0 24px; }
        header.top { padding-top: 20px; }
        h1 { margin: 0; font-size: 24px; overflow-wrap: anywhere; }
        h2 { font-size: 17px; margin: 28px 0 10px; }
        h3 { margin: 0; font-size: 14px; font-weight: 600; overflow-wrap: anywhere; }
        code { font: 12px ui-monospace, "DejaVu Sans Mono", monospace; background: #eceef3; padding: 1px 4px; border-radius: 3px; }
        .meta, .dim { color: var(--dim); }
        .meta { margin: 2px 0 14px; }
        .note { color: var(--dim); margin: 4px 0 12px; }
        .banner { background: #fff4e5; border: 1px solid #f3c98b; padding: 8px 12px; border-radius: 6px; }
        .warnings ul { margin: 0; padding-left: 30px; }
        .warnings li { overflow-wrap: anywhere; }
        .totals { display: flex; flex-wrap: wrap; gap: 10px; margin: 0; }
        .total { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px; min-width: 104px; }
        .total dt { color: var(--dim); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
        .total dd { margin: 0; white-space: nowrap; font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
        .total.good dd { color: var(--good); }
        .total.bad dd { color: var(--bad); }
        .count { display: inline-block; min-width: 22px; padding: 0 7px; border-radius: 11px; background: var(--bad);
          color: #fff; font-size: 12px; text-align: center; vertical-align: 2px; }
        .scroll { overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; vertical-align: top; padding: 7px 12px; border-bottom: 1px solid var(--line); }
        th { font-size: 12px; color: var(--dim); font-weight: 600; text-transform: uppercase; letter-spacing: .04em; }
        tr:last-child td { border-bottom: 0; }
        td.path { overflow-wrap: anywhere; min-width: 10em; }
        td.reason { overflow-wrap: anywhere; min-width: 16em; }
        .stage { display: inline-block; font: 12px ui-monospace, "DejaVu Sans Mono", monospace; color: var(--bad);
          background: #fdecea; border-radius: 4px; padding: 0 5px; }
        .legend { margin: 0 0 8px; }
        .key { display: inline-block; width: 12px; height: 12px; border-radius: 2px; vertical-align: -1px; margin: 0 4px 0 10px; }
        .key:first-child { margin-left: 0; }
        .key.busy { background: var(--busy); }
        .key.wait { background: var(--wait); }
        .chart { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 16px; }
        .chart .row { display: grid; grid-template-columns: 215px minmax(120px, 1fr) 330px; gap: 12px; align-items: center; padding: 4px 0; }
        .chart svg { width: 100%; height: 18px; display: block; }
        .chart .track { fill: #eef0f4; }
        .chart .busy { fill: var(--busy); }
        .chart .wait { fill: var(--wait); }
        .chart .value { font-variant-numeric: tabular-nums; }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 560px), 1fr)); gap: 16px; margin-bottom: 24px; }
        .card { background: var(--card); border: 1px solid var(--line); border-radius: 10px; padding: 14px 16px; min-width: 0; }
        .card.failed { border-color: #efb4ae; box-shadow: inset 4px 0 0 var(--bad); }
        .card > header { display: flex; align-items: baseline; gap: 10px; margin-bottom: 10px; }
        .card > header h3 { flex: 1; min-width: 0; }
        .badge { font-size: 11px; font-weight: 600; text-transform: uppercase; letter-spacing: .05em; padding: 1px 8px;
          border-radius: 10px; color: var(--good); background: #e3f4ea; }
        .failed .badge { color: var(--bad); background: #fdecea; }
        .media { display: flex; flex-wrap: wrap; gap: 14px; align-items: flex-start; }
        figure { margin: 0; }
        figcaption { font-size: 12px; margin-top: 5px; overflow-wrap: anywhere; }
        .input { width: 160px; }
        .input .frame { width: 160px; height: 160px; }
        .outputs { flex: 1; min-width: 220px; display: grid; grid-template-columns: repeat(auto-fill, minmax(112px, 1fr)); gap: 12px; }
        .frame { display: flex; align-items: center; justify-content: center; height: 112px; border-radius: 6px;
          background: #f1f2f5; overflow: hidden; }
        .frame img { display: block; max-width: 100%; max-height: 100%; width: auto; height: auto; }
        .checker { background: repeating-conic-gradient(#e9ebef 0 25%, #f8f9fb 0 50%) 0 0 / 14px 14px; }
        .frame.missing { border: 2px dashed #e3a39c; background: #fdf6f5; color: var(--bad); font-weight: 600; font-size: 12px;
          text-transform: uppercase; letter-spacing: .05em; }
        .input .frame.missing { border-color: var(--line); background: #f6f7f9; color: var(--dim); }
        .fact { white-space: nowrap; }
        .format { color: var(--dim); text-transform: uppercase; font-size: 11px; }
        .smaller { color: var(--good); }
        .larger, .short { color: #b45309; }
        .same { color: var(--dim); }
        .error { margin: 10px 0 0; padding: 8px 10px; background: #fdf6f5; border-radius: 6px; color: #7a1f17; overflow-wrap: anywhere; }
        .timings { font-size: 12px; margin: 10px 0 0; }
        footer { color: var(--dim); font-size: 12px; padding-bottom: 24px; }
        @media (max-width: 760px) {
          main, header.top, footer { padding: 0 12px; }
          header.top { padding-top: 14px; }
          .chart .row { grid-template-columns: 1fr; gap: 4px; padding: 6px 0; }
          .input, .input .frame { width: 120px; height: auto; }
          .input .frame { height: 120px; }
          .outputs { min-width: 0; grid-template-columns: repeat(auto-fill, minmax(88px, 1fr)); gap: 10px; }
          .frame { height: 88px; }
          .total { min-width: 0; flex: 1 1 90px; padding: 6px 10px; }
          .total dd { font-size: 19px; }
          /* The failure table becomes one block per failure: reasons need the width. */
          .failures thead { display: none; }
          .failures table, .failures tbody, .failures tr, .failures td { display: block; }
          .failures tr { padding: 8px 12px; border-bottom: 1px solid var(--line); }
          .failures tr:last-child { border-bottom: 0; }
          .failures td { border: 0; padding: 0; min-width: 0; }
          .failures td.path { font-weight: 600; }
          .failures td:nth-child(2), .failures td:nth-child(3) { display: inline-block; margin-right: 8px; }
        }

        """
}
