#include "apps/report/page_assets.hpp"

namespace rulestream {

std::string_view report_page_style() {
  return R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 0 24px 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 16px 0 4px; }
h2 { font-size: 17px; margin: 20px 0 8px; border-bottom: 1px solid #ddd; }
h3 { font-size: 15px; margin: 14px 0 6px; }
table { border-collapse: collapse; }
td, th { padding: 3px 10px 3px 0; text-align: left; vertical-align: top; }
#rules th, #rules td { border-bottom: 1px solid #eee; padding-right: 14px; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
.status-IssuesFound { color: #b31b1b; font-weight: 600; }
.status-Error { color: #8a4b00; font-weight: 600; }
.status-NoIssuesFound { color: #1b6e2a; }
ol.verdicts { padding-left: 1.4em; }
li.verdict { margin: 0.3em 0; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(360px, 1fr)); gap: 14px; }
.group-losses .charts { grid-template-columns: 1fr; }
figure.chart { margin: 0; border: 1px solid #e4e4e4; padding: 6px; }
figure.chart figcaption { font-size: 12px; color: #444; overflow-wrap: anywhere; }
.plot { position: relative; height: 200px; }
.group-losses .plot { height: 320px; }
.note { color: #666; font-size: 12px; }
)css";
}

std::string_view report_page_script() {
  return R"js(
(function () {
  'use strict';
  const started = performance.now();
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#17becf', '#e377c2'];
  const firingColor = '#d62728';
  // NaN and infinities come as strings: gaps in the curve.
  const plotted = (v) => (typeof v === 'number' ? v : null);
  const shown = (v) => (v === null || v === undefined ? 'NaN or infinite'
                                                       : Number(v).toPrecision(6));
  const firedRules = data.rules.filter((rule) => rule.steps.length > 0);

  // Where rules fired, on the plot area: a thin vertical line at each firing step while there
  // are few (visible even where the curve is NaN: a rule that fired on NaN has no point to sit
  // on); where they are dense (a rule firing at most steps), a rug of short ticks along the top
  // instead, a row per rule named at its start, so that the curve stays readable under them.
  const kFullLinesUpTo = 60;
  const kRugRow = 9;
  const firingLines = {
    id: 'firingLines',
    afterDatasetsDraw(chart, args, options) {
      if (!options.rules || options.rules.length === 0) return;
      const area = chart.chartArea;
      const x = chart.scales.x;
      const columnsOf = (steps) => {
        const columns = new Set();
        for (const step of steps) {
          const px = Math.round(x.getPixelForValue(step)) + 0.5;
          if (px >= area.left && px <= area.right) columns.add(px);
        }
        return columns;
      };
      const rows = options.rules.map((rule) => ({ name: rule.configuration,
                                                  columns: columnsOf(rule.steps) }));
      const all = new Set(rows.flatMap((row) => [...row.columns]));
      const rug = all.size > kFullLinesUpTo;
      const ctx = chart.ctx;
      ctx.save();
      ctx.lineWidth = 1;
      if (!rug) {
        ctx.strokeStyle = 'rgba(214, 39, 40, 0.45)';
        ctx.beginPath();
        for (const px of all) {
          ctx.moveTo(px, area.top);
          ctx.lineTo(px, area.bottom);
        }
        ctx.stroke();
      } else {
        ctx.strokeStyle = firingColor;
        ctx.font = '9px sans-serif';
        rows.forEach((row, i) => {
          const top = area.top + i * kRugRow;
          ctx.beginPath();
          for (const px of row.columns) {
            ctx.moveTo(px, top);
            ctx.lineTo(px, top + kRugRow - 2);
          }
          ctx.stroke();
          const width = ctx.measureText(row.name).width;
          ctx.fillStyle = 'rgba(255, 255, 255, 0.85)';
          ctx.fillRect(area.left + 2, top, width + 4, kRugRow - 1);
          ctx.fillStyle = firingColor;
          ctx.fillText(row.name, area.left + 4, top + kRugRow - 2);
        });
      }
      ctx.restore();
    },
  };

  function dataset(line, color) {
    const points = line.steps.map((step, i) => ({ x: step, y: plotted(line.values[i]) }));
    const base = {
      label: line.label, data: points, borderColor: color, backgroundColor: color,
      borderWidth: 1.5, pointRadius: 0, pointHitRadius: 4, spanGaps: false, yAxisID: 'y',
    };
    if (line.kind === 'count') {
      return { ...base, yAxisID: 'count', borderDash: [4, 3], stepped: true };
    }
    if (line.kind === 'band_low' || line.kind === 'band_high') {
      return { ...base, borderWidth: 0.5, backgroundColor: color + '33',
               fill: line.kind === 'band_high' ? '-1' : false,
               bandEdge: line.kind === 'band_high' ? 'high' : 'low' };
    }
    return base;
  }

  // The rules' firings on a loss: a marker on each firing step that has a finite loss value,
  // for rules that fired at few enough steps for markers to stay apart (the others are in the
  // rug along the top).
  const kMarkersUpTo = 300;
  function firingMarkers(chart) {
    const byStep = new Map();
    for (const line of chart.lines) {
      if (line.kind !== 'line') continue;
      line.steps.forEach((step, i) => {
        const v = plotted(line.values[i]);
        if (v !== null && !byStep.has(step)) byStep.set(step, v);
      });
    }
    const styles = ['triangle', 'rectRot', 'circle', 'star', 'crossRot', 'rect'];
    return firedRules.filter((rule) => rule.steps.length <= kMarkersUpTo).map((rule, i) => ({
      label: rule.configuration + ' fired', type: 'scatter',
      data: rule.steps.filter((s) => byStep.has(s)).map((s) => ({ x: s, y: byStep.get(s) })),
      borderColor: firingColor, backgroundColor: firingColor, pointRadius: 3.5,
      pointStyle: styles[i % styles.length], yAxisID: 'y',
    }));
  }

  // A logarithmic axis where every finite value is positive and they span three decades:
  // a gradient that vanishes is then a cliff, not a line hugging zero.
  function axisType(datasets) {
    let low = Infinity;
    let high = -Infinity;
    for (const set of datasets) {
      if (set.yAxisID !== 'y') continue;
      for (const point of set.data) {
        if (point.y === null) continue;
        low = Math.min(low, point.y);
        high = Math.max(high, point.y);
      }
    }
    return low > 0 && high / low > 1e3 ? 'logarithmic' : 'linear';
  }

  function draw(canvas) {
    const chart = data.charts[Number(canvas.dataset.chart)];
    let colour = 0;
    const datasets = [];
    for (const line of chart.lines) {
      // A band's two edges share a colour.
      const color = palette[colour % palette.length];
      if (line.kind !== 'band_low') colour += 1;
      datasets.push(dataset(line, color));
    }
    if (chart.marks_firings) datasets.push(...firingMarkers(chart));
    const hasCount = chart.lines.some((line) => line.kind === 'count');
    const scales = {
      x: { type: 'linear', title: { display: true, text: 'step' } },
      y: { type: axisType(datasets) },
    };
    if (scales.y.type === 'logarithmic') {
      // Powers of ten only, as 1e-7: Chart.js' own labels of a log axis are long decimals.
      scales.y.ticks = { callback: (v) => {
        const power = Math.log10(v);
        return Math.abs(power - Math.round(power)) < 1e-9 ? '1e' + Math.round(power) : '';
      } };
    }
    if (hasCount) {
      scales.count = { type: 'linear', position: 'right', beginAtZero: true,
                       grid: { drawOnChartArea: false }, title: { display: true, text: 'count' } };
    }
    return new Chart(canvas, {
      type: 'line',
      data: { datasets },
      plugins: [firingLines],
      options: {
        animation: false, parsing: false, normalized: true,
        responsive: true, maintainAspectRatio: false,
        interaction: { mode: 'nearest', axis: 'x', intersect: false },
        scales,
        plugins: {
          // A band is one legend entry (its low edge's, named without "(min)"): two per band
          // left a histogram's small chart no room to plot.
          legend: { labels: {
            boxWidth: 10, font: { size: 11 },
            filter: (item, shownData) => shownData.datasets[item.datasetIndex].bandEdge !== 'high',
            generateLabels: (shownChart) =>
              Chart.defaults.plugins.legend.labels.generateLabels(shownChart).map((item) => {
                const set = shownChart.data.datasets[item.datasetIndex];
                if (set.bandEdge === 'low') item.text = item.text.replace(/ \(min\)$/, '');
                return item;
              }),
          } },
          tooltip: { callbacks: {
            title: (items) => (items.length ? 'step ' + items[0].parsed.x : ''),
            label: (item) => item.dataset.label + ': ' + shown(item.parsed.y),
          } },
          firingLines: { rules: chart.marks_firings ? firedRules : [] },
        },
      },
    });
  }

  for (const canvas of document.querySelectorAll('canvas[data-chart]')) draw(canvas);
  // Drawing alone, and everything since the navigation began (reading the page, parsing the
  // library and the data, drawing): what the benchmark reports as the time to open.
  document.body.dataset.renderMs = (performance.now() - started).toFixed(1);
  document.body.dataset.readyMs = performance.now().toFixed(1);
})();
)js";
}

}  // namespace rulestream
