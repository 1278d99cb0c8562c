/** `assets/app.css`: the browsing UI's one stylesheet (light and dark by `prefers-color-scheme`). */
export const APP_CSS = String.raw`:root {
  color-scheme: light dark;
  --bg: #f6f7f9;
  --panel: #ffffff;
  --panel-2: #f0f2f5;
  --text: #1b1f24;
  --muted: #5d6673;
  --faint: #8a929e;
  --border: #dde1e6;
  --accent: #1f5fd1;
  --accent-soft: #e6eefc;
  --good: #18794e;
  --good-soft: #e3f4ea;
  --bad: #b42318;
  --bad-soft: #fdecea;
  --warn: #8a5a00;
  --warn-soft: #fff4d6;
  --shadow: 0 1px 2px rgb(16 24 40 / 6%), 0 1px 3px rgb(16 24 40 / 8%);
  --mono: ui-monospace, "SFMono-Regular", "SF Mono", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Helvetica Neue", Arial, sans-serif;
  --radius: 10px;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0f1216;
    --panel: #171b21;
    --panel-2: #1e242c;
    --text: #e6e9ee;
    --muted: #a0a9b5;
    --faint: #717b88;
    --border: #2a313b;
    --accent: #7aa7ff;
    --accent-soft: #1b2a45;
    --good: #5cc98f;
    --good-soft: #173325;
    --bad: #ff8a80;
    --bad-soft: #3a1d1b;
    --warn: #f0c05a;
    --warn-soft: #3a2f14;
    --shadow: none;
  }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0;
  background: var(--bg);
  color: var(--text);
  font: 15px/1.55 var(--sans);
  min-height: 100vh;
  display: flex;
  flex-direction: column;
}
a { color: var(--accent); text-decoration: none; }
a:hover { text-decoration: underline; }
a:focus-visible, button:focus-visible, input:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
h1, h2, h3 { line-height: 1.25; margin: 0; }
h1 { font-size: 1.45rem; font-weight: 650; }
h2 { font-size: 1.08rem; font-weight: 650; }
code, .mono, pre { font-family: var(--mono); font-size: 0.86em; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }

/* Header */
.top {
  position: sticky;
  top: 0;
  z-index: 5;
  background: var(--panel);
  border-bottom: 1px solid var(--border);
}
.top-inner {
  max-width: 1120px;
  margin: 0 auto;
  padding: 10px 20px;
  display: flex;
  align-items: center;
  gap: 16px;
  flex-wrap: wrap;
}
.brand { display: flex; align-items: center; gap: 9px; color: var(--text); font-weight: 700; font-size: 1.05rem; letter-spacing: -0.01em; }
.brand:hover { text-decoration: none; }
.logo { width: 26px; height: 26px; flex: none; }
.net { font-size: 0.75rem; font-weight: 600; color: var(--muted); background: var(--panel-2); border: 1px solid var(--border); border-radius: 999px; padding: 1px 9px; white-space: nowrap; }
.net:empty { display: none; }
#search { flex: 1 1 340px; display: flex; gap: 8px; min-width: 0; }
#q {
  flex: 1;
  min-width: 0;
  font: inherit;
  font-size: 0.95rem;
  color: var(--text);
  background: var(--bg);
  border: 1px solid var(--border);
  border-radius: 8px;
  padding: 8px 12px;
}
#q::placeholder { color: var(--faint); }
button, .btn {
  font: inherit;
  font-size: 0.9rem;
  font-weight: 600;
  color: #fff;
  background: var(--accent);
  border: 0;
  border-radius: 8px;
  padding: 8px 16px;
  cursor: pointer;
}
@media (prefers-color-scheme: dark) { button, .btn { color: #0f1216; } }
button.secondary { background: var(--panel-2); color: var(--text); border: 1px solid var(--border); }

/* Layout */
main { flex: 1; width: 100%; max-width: 1120px; margin: 0 auto; padding: 24px 20px 40px; }
footer { color: var(--faint); font-size: 0.82rem; text-align: center; padding: 18px 20px 26px; }
footer a { color: var(--muted); }
.page-head { display: flex; align-items: flex-start; justify-content: space-between; gap: 12px; margin-bottom: 18px; flex-wrap: wrap; }
.page-head .title { min-width: 0; flex: 1 1 420px; }
.kind { font-size: 0.75rem; font-weight: 700; letter-spacing: 0.08em; text-transform: uppercase; color: var(--muted); margin-bottom: 3px; }
.page-head h1 { overflow-wrap: anywhere; }
.page-head h1.hash { font-family: var(--mono); font-size: 1.05rem; font-weight: 600; }
.actions { display: flex; gap: 8px; flex-wrap: wrap; }
.raw {
  display: inline-flex; align-items: center; gap: 6px;
  font-size: 0.82rem; font-weight: 600;
  border: 1px solid var(--border); border-radius: 8px; padding: 5px 11px;
  background: var(--panel); color: var(--muted); white-space: nowrap;
}
.raw:hover { color: var(--accent); border-color: var(--accent); text-decoration: none; }
.card {
  background: var(--panel);
  border: 1px solid var(--border);
  border-radius: var(--radius);
  box-shadow: var(--shadow);
  padding: 18px 20px;
  margin-bottom: 18px;
  min-width: 0;
}
.card > h2 { margin-bottom: 12px; display: flex; align-items: baseline; gap: 8px; }
.card > h2 .count { color: var(--faint); font-weight: 500; font-size: 0.9rem; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(320px, 1fr)); gap: 18px; }
.grid2 > .card { margin-bottom: 0; }
.stack > * + * { margin-top: 18px; }

/* Key/value lists */
dl.kv { display: grid; grid-template-columns: minmax(110px, max-content) 1fr; gap: 7px 22px; margin: 0; }
dl.kv dt { color: var(--muted); font-size: 0.88rem; padding-top: 1px; }
dl.kv dd { margin: 0; min-width: 0; overflow-wrap: anywhere; }

/* Stats tiles */
.tiles { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr)); gap: 12px; margin-bottom: 18px; }
.tile { background: var(--panel); border: 1px solid var(--border); border-radius: var(--radius); box-shadow: var(--shadow); padding: 13px 16px; min-width: 0; }
.tile .label { color: var(--muted); font-size: 0.78rem; font-weight: 600; text-transform: uppercase; letter-spacing: 0.05em; }
.tile .value { font-size: 1.3rem; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; font-weight: 650; font-variant-numeric: tabular-nums; margin-top: 2px; overflow-wrap: anywhere; }
.tile .sub { color: var(--faint); font-size: 0.8rem; overflow-wrap: anywhere; }
.bars { display: grid; grid-template-columns: max-content 1fr max-content; gap: 6px 12px; align-items: center; font-size: 0.88rem; }
.bars .bar { height: 8px; border-radius: 4px; background: var(--panel-2); overflow: hidden; }
.bars .bar > span { display: block; height: 100%; background: var(--accent); border-radius: 4px; min-width: 2px; }
.bars .n { font-variant-numeric: tabular-nums; color: var(--muted); text-align: right; }
.bars .zero { color: var(--faint); }

/* Tables */
.table-wrap { overflow-x: auto; margin: 0 -4px; }
table { width: 100%; border-collapse: collapse; font-size: 0.9rem; }
th { text-align: left; color: var(--muted); font-weight: 600; font-size: 0.78rem; text-transform: uppercase; letter-spacing: 0.05em; padding: 6px 8px; border-bottom: 1px solid var(--border); white-space: nowrap; }
td { padding: 8px; border-bottom: 1px solid var(--border); vertical-align: top; }
tr:last-child td { border-bottom: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.hash-cell { max-width: 0; width: 50%; }
.ellipsis { display: block; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }

/* Hashes, amounts, badges */
.hash, .addr { font-family: var(--mono); font-size: 0.86em; overflow-wrap: anywhere; }
.amt { font-variant-numeric: tabular-nums; white-space: nowrap; }
.amt .zeros { color: var(--faint); }
.amt .unit { color: var(--muted); font-size: 0.85em; margin-left: 0.25em; }
.amt.neg { color: var(--bad); }
.amt.pos { color: var(--good); }
.time .rel { color: var(--faint); margin-left: 0.4em; font-size: 0.9em; }
.badge { display: inline-block; font-size: 0.72rem; font-weight: 700; letter-spacing: 0.03em; border-radius: 999px; padding: 1px 8px; vertical-align: 1px; white-space: nowrap; background: var(--panel-2); color: var(--muted); }
.badge.good { background: var(--good-soft); color: var(--good); }
.badge.bad { background: var(--bad-soft); color: var(--bad); }
.badge.warn { background: var(--warn-soft); color: var(--warn); }
.badge.info { background: var(--accent-soft); color: var(--accent); }
.kind .badge { text-transform: none; letter-spacing: 0.01em; }
.txrow-meta { display: inline-flex; gap: 8px; align-items: baseline; flex-wrap: wrap; font-size: 0.88rem; }
.delta { font-weight: 600; padding: 1px 8px; border-radius: 6px; background: var(--panel-2); }
.muted { color: var(--muted); }
.faint { color: var(--faint); }
.script {
  font-family: var(--mono);
  font-size: 0.8rem;
  background: var(--panel-2);
  border-radius: 6px;
  padding: 6px 9px;
  margin-top: 5px;
  overflow-wrap: anywhere;
  white-space: pre-wrap;
  color: var(--muted);
}
.value-box { background: var(--panel-2); border-radius: 8px; padding: 10px 12px; font-family: var(--mono); font-size: 0.86rem; white-space: pre-wrap; overflow-wrap: anywhere; max-height: 420px; overflow: auto; }
.value-box.empty { color: var(--faint); font-family: var(--sans); font-style: italic; }

/* Transaction flow (inputs → outputs) */
.io { display: grid; grid-template-columns: minmax(0, 1fr) 28px minmax(0, 1fr); gap: 0 6px; align-items: start; }
.io .arrow { color: var(--faint); text-align: center; padding-top: 8px; font-size: 1.1rem; }
.io-list { list-style: none; margin: 0; padding: 0; min-width: 0; }
.io-item { padding: 8px 10px; border: 1px solid var(--border); border-radius: 8px; margin-bottom: 8px; min-width: 0; background: var(--panel); }
.io-item .line { display: flex; justify-content: space-between; gap: 10px; align-items: baseline; flex-wrap: wrap; }
.io-item .idx { color: var(--faint); font-size: 0.78rem; font-variant-numeric: tabular-nums; margin-right: 6px; }
.io-item .who { min-width: 0; overflow-wrap: anywhere; flex: 1 1 200px; }
.io-item .meta { font-size: 0.8rem; color: var(--muted); margin-top: 3px; overflow-wrap: anywhere; }
.txrow { border: 1px solid var(--border); border-radius: var(--radius); padding: 12px 14px; margin-bottom: 12px; }
.txrow-head { display: flex; justify-content: space-between; gap: 10px; flex-wrap: wrap; margin-bottom: 8px; align-items: baseline; }
.txrow-head .hash { font-weight: 600; min-width: 0; }
.txrow .io-item { padding: 5px 8px; margin-bottom: 5px; }
.more { margin-top: 6px; }
.nameop { display: inline-flex; gap: 6px; align-items: baseline; margin-top: 4px; font-size: 0.85rem; flex-wrap: wrap; }

/* Messages */
.notice { border-radius: var(--radius); padding: 16px 18px; background: var(--panel); border: 1px solid var(--border); }
.notice.error { border-color: var(--bad); background: var(--bad-soft); }
.notice h1 { font-size: 1.15rem; margin-bottom: 6px; }
.loading { color: var(--muted); }
.hint { color: var(--muted); font-size: 0.88rem; }
.hint code { background: var(--panel-2); border-radius: 4px; padding: 1px 5px; }

@media (max-width: 720px) {
  body { font-size: 14px; }
  .top-inner { padding: 10px 14px; gap: 10px; }
  #search { flex-basis: 100%; }
  main { padding: 16px 12px 32px; }
  .card { padding: 14px; }
  .io { grid-template-columns: minmax(0, 1fr); }
  .io .arrow { padding: 0 0 6px; transform: rotate(90deg); }
  dl.kv { grid-template-columns: 1fr; gap: 1px; }
  dl.kv dd { margin-bottom: 8px; }
  .hide-narrow { display: none; }
  .tiles { grid-template-columns: repeat(2, minmax(0, 1fr)); }
}
`;
