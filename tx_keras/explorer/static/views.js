// The two drawings of one attention record {queries, keys, weights[layer][head][query][key], head_labels}:
// the head view (tokens in two columns, lines weighted by attention, heads as colours) and the model view
// (every layer x head as a thumbnail). Plain DOM and SVG, no build step.

const SVG = 'http://www.w3.org/2000/svg';
export const HEAD_COLOURS = [
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
  '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf',
];

export function headColour(head) {
  return HEAD_COLOURS[head % HEAD_COLOURS.length];
}

export function el(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'text') node.textContent = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value);
  }
  for (const child of [].concat(children)) if (child) node.append(child);
  return node;
}

function svg(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

// Toggle chips, one per head, in the head's colour; `hidden` is a Set of head indices.
export function headToggles(labels, hidden, onChange) {
  const chips = labels.map((label, head) =>
    el('button', {
      class: 'head-chip' + (hidden.has(head) ? ' off' : ''),
      style: `--head:${headColour(head)}`,
      'data-head': head,
      title: hidden.has(head) ? `show ${label}` : `hide ${label}`,
      text: label,
      onclick: () => {
        hidden.has(head) ? hidden.delete(head) : hidden.add(head);
        onChange();
      },
    })
  );
  const all = el('button', {
    class: 'link-button',
    text: 'all',
    onclick: () => {
      hidden.clear();
      onChange();
    },
  });
  const none = el('button', {
    class: 'link-button',
    text: 'none',
    onclick: () => {
      labels.forEach((_, head) => hidden.add(head));
      onChange();
    },
  });
  return el('div', {class: 'head-toggles'}, [el('span', {class: 'label', text: 'Heads'}), ...chips, all, none]);
}

const ROW = 22; // px per token row
const TEXT_WIDTH = 150; // px for each token column
const GAP = 200; // px between the columns, where the lines go

// The head view of one layer. `focus` is {side: 'query'|'key', index, locked} or null. Hover or click
// repaints only the lines, shading and readout in place (the tokens stay, so hovering cannot loop);
// `onFocus(focus)` lets the caller remember the choice across redraws.
export function headView(record, layer, hidden, focus, onFocus, captions) {
  const {queries, keys} = record;
  const weights = record.weights[layer];
  const heads = weights.map((_, head) => head).filter((head) => !hidden.has(head));
  const height = Math.max(queries.length, keys.length) * ROW + 30;
  const width = 2 * TEXT_WIDTH + GAP;
  const root = svg('svg', {class: 'head-view', width, height, viewBox: `0 0 ${width} ${height}`});
  root.append(svg('text', {x: TEXT_WIDTH - 6, y: 14, class: 'column-title', 'text-anchor': 'end'}));
  root.lastChild.textContent = captions[0];
  root.append(svg('text', {x: TEXT_WIDTH + GAP + 6, y: 14, class: 'column-title'}));
  root.lastChild.textContent = captions[1];
  const y = (index) => 30 + index * ROW + ROW / 2;
  const lines = svg('g', {class: 'lines'});
  root.append(lines);
  const row = el('div', {class: 'head-view-row'}, [root]);
  const boxes = {query: [], key: []};
  const groups = {query: [], key: []};
  let current = focus;

  const paint = () => {
    lines.replaceChildren();
    const heavy = heads.length > 1 ? 1 / Math.sqrt(heads.length) : 1;
    for (const head of heads) {
      for (let q = 0; q < queries.length; q++) {
        if (current && current.side === 'query' && current.index !== q) continue;
        for (let k = 0; k < keys.length; k++) {
          if (current && current.side === 'key' && current.index !== k) continue;
          const w = weights[head][q][k];
          if (w < 0.02) continue;
          lines.append(
            svg('line', {
              x1: TEXT_WIDTH,
              y1: y(q),
              x2: TEXT_WIDTH + GAP,
              y2: y(k),
              stroke: headColour(head),
              'stroke-width': current ? 3 : 2,
              'stroke-opacity': Math.min(1, w * (current ? 1 : heavy)),
            })
          );
        }
      }
    }
    // The other side of a focused token is shaded by its weight (mean over the visible heads).
    for (const side of ['query', 'key']) {
      boxes[side].forEach((box, index) => {
        let shade = 0;
        if (current && current.side !== side && heads.length) {
          const value = (head) =>
            side === 'key' ? weights[head][current.index][index] : weights[head][index][current.index];
          shade = heads.reduce((sum, head) => sum + value(head), 0) / heads.length;
        }
        box.setAttribute('fill-opacity', shade.toFixed(3));
        const focused = current && current.side === side && current.index === index;
        groups[side][index].setAttribute('class', 'token' + (focused ? ' focused' : ''));
      });
    }
    if (row.children.length > 1) row.lastChild.remove();
    row.append(readout(record, layer, heads, current));
  };
  const setFocus = (next) => {
    current = next;
    onFocus(next);
    paint();
  };

  const column = (tokens, side, x, anchor) =>
    tokens.forEach((token, index) => {
      const group = svg('g', {class: 'token', 'data-side': side, 'data-index': index});
      const box = svg('rect', {
        x: anchor === 'end' ? x - TEXT_WIDTH + 4 : x,
        y: y(index) - ROW / 2 + 1,
        width: TEXT_WIDTH - 4,
        height: ROW - 2,
        rx: 3,
        fill: '#ff9800', // also in the attributes: an exported SVG carries no stylesheet
        class: 'token-box',
      });
      const text = svg('text', {x: anchor === 'end' ? x - 6 : x + 6, y: y(index) + 5, 'text-anchor': anchor});
      text.textContent = token;
      group.append(box, text);
      group.addEventListener('mouseenter', () => {
        if (!current || !current.locked) setFocus({side, index, locked: false});
      });
      group.addEventListener('click', () => {
        const same = current && current.locked && current.side === side && current.index === index;
        setFocus(same ? null : {side, index, locked: true});
      });
      boxes[side].push(box);
      groups[side].push(group);
      root.append(group);
    });
  column(queries, 'query', TEXT_WIDTH, 'end');
  column(keys, 'key', TEXT_WIDTH + GAP, 'start');
  root.addEventListener('mouseleave', () => {
    if (current && !current.locked) setFocus(null);
  });
  paint();
  return row;
}

// The numbers behind the focused token's lines: one column per visible head, three decimals.
function readout(record, layer, heads, focus) {
  if (!focus) {
    return el('div', {class: 'readout hint', text: 'Hover a token to see only its lines and weights; click to pin it.'});
  }
  const weights = record.weights[layer];
  const fromQuery = focus.side === 'query';
  const token = (fromQuery ? record.queries : record.keys)[focus.index];
  const others = fromQuery ? record.keys : record.queries;
  const value = (head, other) =>
    fromQuery ? weights[head][focus.index][other] : weights[head][other][focus.index];
  const title = fromQuery ? `“${token}” attends to` : `attending to “${token}”`;
  const header = el('tr', {}, [
    el('th', {text: fromQuery ? 'key' : 'query'}),
    ...heads.map((head) =>
      el('th', {style: `color:${headColour(head)}`, text: record.head_labels[head]})
    ),
  ]);
  const rows = others.map((other, index) =>
    el('tr', {}, [
      el('td', {class: 'token-cell', text: other}),
      ...heads.map((head) => {
        const w = value(head, index);
        return el('td', {
          class: 'weight',
          'data-head': head,
          'data-index': index,
          'data-weight': String(w),
          style:
            `background: rgba(${rgb(headColour(head))}, ${Math.min(1, w).toFixed(3)})` +
            (w > 0.55 ? '; color: #fff' : ''), // dark cells get light digits
          text: w.toFixed(3),
        });
      }),
    ])
  );
  return el('div', {class: 'readout', 'data-side': focus.side, 'data-index': focus.index}, [
    el('div', {class: 'readout-title', text: title + (focus.locked ? ' (pinned: click again to release)' : '')}),
    el('table', {}, [el('thead', {}, header), el('tbody', {}, rows)]),
  ]);
}

function rgb(hex) {
  const n = parseInt(hex.slice(1), 16);
  return `${n >> 16}, ${(n >> 8) & 255}, ${n & 255}`;
}

const THUMB = 96; // px: the longer side of a model-view thumbnail

// The model view: rows are layers, columns heads; each a heat-map of queries x keys in the head's colour,
// scaled to its own largest weight so that a pattern shows even while the attention is still spread out.
export function modelView(record, selectedLayer, hidden, onPick) {
  const {queries, keys} = record;
  const cell = Math.max(2, Math.floor(THUMB / Math.max(queries.length, keys.length)));
  const grid = el('div', {class: 'model-view'});
  const headCount = record.weights[0].length;
  grid.style.gridTemplateColumns = `auto repeat(${headCount}, max-content)`;
  grid.append(el('div'));
  record.head_labels.forEach((label, head) =>
    grid.append(el('div', {class: 'grid-label', style: `color:${headColour(head)}`, text: label}))
  );
  record.weights.forEach((layer, layerIndex) => {
    grid.append(el('div', {class: 'grid-label', text: `layer ${layerIndex + 1}`}));
    layer.forEach((matrix, head) => {
      const canvas = el('canvas', {
        width: keys.length * cell,
        height: queries.length * cell,
        class:
          'thumb' +
          (headCount > 1 && layerIndex === selectedLayer && !hidden.has(head) && hidden.size === headCount - 1
            ? ' picked'
            : ''),
        'data-layer': layerIndex,
        'data-head': head,
        title: `layer ${layerIndex + 1}, ${record.head_labels[head]}: click to open in the head view`,
        onclick: () => onPick(layerIndex, head),
      });
      const context = canvas.getContext('2d');
      const colour = rgb(headColour(head));
      const largest = Math.max(1e-6, ...matrix.map((row) => Math.max(...row)));
      matrix.forEach((row, q) =>
        row.forEach((w, k) => {
          context.fillStyle = `rgba(${colour}, ${(w / largest).toFixed(3)})`;
          context.fillRect(k * cell, q * cell, cell, cell);
        })
      );
      grid.append(canvas);
    });
  });
  return grid;
}
