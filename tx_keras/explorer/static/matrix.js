// A labelled heat-map of one matrix (rows x columns of tokens) as plain SVG: readable at 60+ tokens
// (cells shrink to a floor, then the box scrolls; a zoom slider scales it), and exportable as the SVG
// itself or as a PNG drawn from it on a canvas, in the page, with nothing loaded from elsewhere.

import {el} from './views.js';

const SVG = 'http://www.w3.org/2000/svg';
const LABEL = 7; // px per character of a token label
const FONT = '12px Roboto, Helvetica, Arial, sans-serif';

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// Orange for positive, blue for negative, as opaque as |value| / scale.
function fill(value, scale) {
  const strength = Math.min(1, Math.abs(value) / (scale || 1));
  return value >= 0 ? `rgba(245, 124, 0, ${strength.toFixed(3)})` : `rgba(25, 118, 210, ${strength.toFixed(3)})`;
}

// The drawing alone, as a standalone SVG (inline styles, so the exported file looks the same anywhere).
export function matrixSvg(rows, columns, values, {cell = 18, perRow = false, digits = 3} = {}) {
  const left = 8 + LABEL * Math.max(1, ...rows.map((token) => token.length));
  const top = 8 + LABEL * Math.max(1, ...columns.map((token) => token.length)) * 0.75;
  const width = left + columns.length * cell + 4;
  const height = top + rows.length * cell + 4;
  const root = svg('svg', {
    xmlns: SVG,
    class: 'matrix',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    style: `font: ${FONT}`,
  });
  root.append(svg('rect', {x: 0, y: 0, width, height, fill: '#ffffff'}));
  const largest = Math.max(1e-9, ...values.flat().map(Math.abs));
  rows.forEach((token, r) => {
    root.append(
      svg('text', {x: left - 4, y: top + r * cell + cell / 2 + 4, 'text-anchor': 'end', fill: '#212121', class: 'row-label'}, token)
    );
  });
  columns.forEach((token, c) => {
    const x = left + c * cell + cell / 2 + 4;
    root.append(
      svg('text', {x, y: top - 4, transform: `rotate(-45 ${x} ${top - 4})`, fill: '#212121', class: 'column-label'}, token)
    );
  });
  const cells = svg('g', {class: 'cells'});
  values.forEach((row, r) => {
    const scale = perRow ? Math.max(1e-9, ...row.map(Math.abs)) : largest;
    row.forEach((value, c) => {
      const rect = svg('rect', {
        x: left + c * cell,
        y: top + r * cell,
        width: cell - 1,
        height: cell - 1,
        fill: fill(value, scale),
        class: 'cell',
        'data-row': r,
        'data-col': c,
        'data-value': value,
      });
      rect.append(svg('title', {}, `${rows[r]} → ${columns[c]}: ${Number(value).toFixed(digits)}`));
      cells.append(rect);
    });
  });
  root.append(cells);
  return root;
}

function download(name, blob) {
  const url = URL.createObjectURL(blob);
  const link = el('a', {href: url, download: name});
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

// SVG text of a drawing, and a PNG of it at `scale` (device pixels per SVG pixel).
export function svgText(node) {
  return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(node);
}

export function pngBlob(node, scale = 2) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => {
      const canvas = el('canvas', {width: node.width.baseVal.value * scale, height: node.height.baseVal.value * scale});
      const context = canvas.getContext('2d');
      context.scale(scale, scale);
      context.drawImage(image, 0, 0);
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('the canvas gave no PNG'))), 'image/png');
    };
    image.onerror = () => reject(new Error('the drawing could not be rasterised'));
    image.src = 'data:image/svg+xml;charset=utf-8,' + encodeURIComponent(svgText(node));
  });
}

// Export buttons for any SVG drawing `target()` returns (drawn at the moment of the click).
export function exportButtons(name, target) {
  return el('span', {class: 'export-buttons'}, [
    el('button', {
      class: 'link-button',
      'data-export': 'svg',
      text: 'SVG',
      title: 'save this view as an SVG file',
      onclick: () => download(`${name}.svg`, new Blob([svgText(target())], {type: 'image/svg+xml'})),
    }),
    el('button', {
      class: 'link-button',
      'data-export': 'png',
      text: 'PNG',
      title: 'save this view as a PNG image',
      onclick: async () => download(`${name}.png`, await pngBlob(target())),
    }),
  ]);
}

// The heat-map in a scrolling box with a zoom slider and export buttons. Options: title, name (file
// name of exports), perRow (each row scaled to its own largest |value|), note.
export function matrixView(rows, columns, values, options = {}) {
  const longest = Math.max(rows.length, columns.length);
  const base = Math.max(8, Math.min(24, Math.floor(640 / Math.max(1, longest))));
  const box = el('div', {class: 'matrix-scroll'});
  let zoom = 1;
  let drawing = null;
  const redraw = () => {
    drawing = matrixSvg(rows, columns, values, {cell: Math.round(base * zoom), perRow: options.perRow});
    box.replaceChildren(drawing);
  };
  redraw();
  const slider = el('input', {
    type: 'range',
    class: 'zoom',
    min: 0.5,
    max: 3,
    step: 0.25,
    value: 1,
    title: 'zoom',
    oninput: (event) => {
      zoom = Number(event.target.value);
      redraw();
    },
  });
  return el('div', {class: 'matrix-view', 'data-name': options.name || 'matrix'}, [
    el('div', {class: 'matrix-header'}, [
      el('span', {class: 'matrix-title', text: options.title || ''}),
      el('label', {class: 'control'}, [el('span', {class: 'label', text: 'zoom'}), slider]),
      exportButtons(options.name || 'matrix', () => drawing),
    ]),
    options.note ? el('div', {class: 'matrix-note', text: options.note}) : null,
    box,
  ]);
}
