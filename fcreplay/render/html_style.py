"""The HTML report's style sheet: inline, no fonts or images, and no wider than the window.

Every table may wrap its cells (long targets, messages and paths break anywhere), so
the page fits a 1280 px window without scrolling sideways. A drill-down's body shows
when it is the page's `:target` (the cell that links to it was clicked).
"""

CSS = """
*{box-sizing:border-box}
body{font:13px/1.4 system-ui,sans-serif;margin:1.2em;color:#1b1b1b;background:#fff;
max-width:100%;overflow-wrap:anywhere}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.6em}h4{margin:.6em 0 .2em}
table{border-collapse:collapse;margin:.5em 0;max-width:100%}
th,td{border:1px solid #ccc;padding:.2em .4em;text-align:left;vertical-align:top}
th{background:#f3f3f3;font-weight:600}td.num{text-align:right}
code{font:12px/1.3 ui-monospace,monospace;background:#f4f4f4;padding:0 .2em;
white-space:pre-wrap;overflow-wrap:anywhere}
table.matrix td{text-align:center;white-space:nowrap;padding:.15em .3em}
table.matrix td a{color:inherit;text-decoration:none;display:block}
table.matrix th{font-size:12px}
td.pass{background:#c8ecc8}td.fail{background:#f6c1c1}td.mixed{background:#fbe3a8}
td.error{background:#d5d5d5}td.none{background:#fff;color:#999}
td.stale{background:repeating-linear-gradient(45deg,#dfe7f3,#dfe7f3 4px,#eef2f8 4px,#eef2f8 8px);
color:#334}
sup.g{font-size:10px;font-weight:700;margin-left:.15em}
.bar{display:inline-block;height:.7em;background:#4a78c2;vertical-align:middle}
.track{display:inline-block;width:3.2em;background:#e6e6e6;margin-right:.3em}
table.metrics td{white-space:nowrap}table.metrics th{white-space:normal}
table.errors,table.golden{table-layout:fixed;width:100%}
table.errors td,table.golden td{overflow-wrap:anywhere}
p.meta,span.meta{color:#555}
section.unit{border:1px solid #ddd;border-radius:4px;margin:.25em 0;padding:.1em .6em}
section.unit h3{font-size:1em;margin:.2em 0;font-weight:600}
section.unit .body{display:none}
section.unit:target .body{display:block}
section.unit:target{outline:3px solid #4a78c2;background:#fcfcff}
ol.turns{margin:.2em 0 .6em;padding-left:1.4em}ol.turns li{margin:.15em 0}
li.finding{color:#8a1c1c}li.error,span.bad{color:#6b3d00}li.stale{color:#334}
.v-pass{color:#1b6b1b}.v-fail{color:#8a1c1c}.v-error{color:#6b3d00}
p.golden{background:#f7f7fb;border-left:4px solid #99a;padding:.3em .6em}
p.g-regression{border-color:#c33}p.g-fix{border-color:#3a3}p.g-stale{border-color:#68a}
p.warn{background:#eef2f8;border-left:4px solid #68a;padding:.4em .7em}
dt{font-weight:600;margin-top:.5em}dd{margin-left:1.5em}
"""
