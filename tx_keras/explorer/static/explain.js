// "Why this word?": what the run's own model says about one sentence (the /explain route): each output
// token's probability and entropy with its top-5 alternatives, its attribution to the source tokens
// (integrated gradients or gradient x input), the attention rollout, and a head knock-out.

import {el} from './views.js';
import {matrixView} from './matrix.js';

const METHODS = {
  integrated_gradients: 'integrated gradients',
  gradient_x_input: 'gradient × input',
};
const KIND_NAMES = {encoder_self: 'encoder self', decoder_self: 'decoder self', cross: 'cross'};

// Green when sure, red when not: probability as hue.
function confidenceColour(probability) {
  return `hsl(${Math.round(120 * probability)}, 70%, 85%)`;
}

function attributionColour(value, scale) {
  const strength = Math.min(1, Math.abs(value) / (scale || 1));
  return value >= 0 ? `rgba(245, 124, 0, ${strength.toFixed(3)})` : `rgba(25, 118, 210, ${strength.toFixed(3)})`;
}

// The output tokens as chips coloured by probability; hovering one shows its top-5, clicking picks it.
function confidenceRow(body, view, redraw) {
  return el(
    'div',
    {class: 'token-row outputs'},
    [el('span', {class: 'label', text: 'output'})].concat(
      body.confidence.map((row, index) =>
        el(
          'span',
          {
            class: 'out-token' + (index === view.picked ? ' picked' : ''),
            style: `background:${confidenceColour(row.probability)}`,
            'data-index': index,
            'data-probability': row.probability,
            'data-entropy': row.entropy,
            onclick: () => {
              view.picked = index;
              redraw();
            },
          },
          [
            el('span', {class: 'token-text', text: row.token}),
            el('span', {class: 'probability', text: row.probability.toFixed(2)}),
            el('div', {class: 'top5'}, [
              el('div', {class: 'top5-title', text: `p = ${row.probability.toFixed(4)} · entropy ${row.entropy.toFixed(3)} nats`}),
              el(
                'table',
                {},
                row.top.map(([token, probability]) =>
                  el('tr', {class: 'alternative'}, [
                    el('td', {text: token}),
                    el('td', {class: 'alternative-probability', text: probability.toFixed(4)}),
                  ])
                )
              ),
            ]),
          ]
        )
      )
    )
  );
}

// The source tokens coloured by the picked output token's attribution (scaled to its largest |value|).
function attributionRow(body, view) {
  const values = body.attribution[view.method][view.picked];
  const scale = Math.max(1e-9, ...values.map(Math.abs));
  return el(
    'div',
    {class: 'token-row sources'},
    [el('span', {class: 'label', text: `source, for “${body.output_tokens[view.picked]}”`})].concat(
      body.source_tokens.map((token, index) =>
        el('span', {
          class: 'src-token',
          style: `background:${attributionColour(values[index], scale)}`,
          'data-index': index,
          'data-attribution': values[index],
          title: `${METHODS[view.method]}: ${values[index].toFixed(4)}`,
          text: token,
        })
      )
    )
  );
}

function knockoutControls(body, view, onKnockout) {
  const importance = body.importance || {};
  const grid = el('div', {class: 'knockout-grid'});
  for (const [kind, layers] of Object.entries(body.heads)) {
    layers.forEach((heads, layer) => {
      const scores = importance[`${kind}/layer_${layer + 1}`] || [];
      grid.append(el('span', {class: 'grid-label', text: `${KIND_NAMES[kind]} · layer ${layer + 1}`}));
      const row = el('span', {class: 'knockout-row'});
      for (let head = 0; head < heads; head++) {
        const key = `${kind}/${layer}/${head}`;
        const box = el('input', {
          type: 'checkbox',
          class: 'head-off',
          'data-kind': kind,
          'data-layer': layer,
          'data-head': head,
          checked: view.off.has(key),
          onchange: (event) => (event.target.checked ? view.off.add(key) : view.off.delete(key)),
        });
        const score = scores[head];
        row.append(
          el('label', {class: 'knockout-head', title: 'loss increase when this head alone is masked'}, [
            box,
            el('span', {text: `h${head + 1}` + (score === undefined ? '' : ` (${score >= 0 ? '+' : ''}${score.toFixed(3)})`)}),
          ])
        );
      }
      grid.append(row);
    });
  }
  const topK = el('input', {type: 'number', class: 'top-k', min: 0, value: view.topK, style: 'width:4em'});
  const keepTop = () => {
    const ranked = [];
    for (const [kind, layers] of Object.entries(body.heads)) {
      layers.forEach((heads, layer) => {
        const scores = importance[`${kind}/layer_${layer + 1}`] || [];
        for (let head = 0; head < heads; head++) ranked.push([scores[head] ?? 0, `${kind}/${layer}/${head}`]);
      });
    }
    ranked.sort((a, b) => b[0] - a[0]);
    view.topK = Math.max(0, Number(topK.value) || 0);
    view.off = new Set(ranked.slice(view.topK).map(([, key]) => key));
    onKnockout();
  };
  return el('div', {class: 'knockout'}, [
    el('div', {class: 'notice', text: `Importance: ${body.importance_measured_on} (each head masked alone). Tick heads to knock out.`}),
    grid,
    el('div', {class: 'controls knockout-actions'}, [
      el('button', {class: 'action knock-out', text: 'Knock out', onclick: onKnockout}),
      el('button', {
        class: 'link-button undo',
        text: 'undo (all heads back)',
        onclick: () => {
          view.off = new Set();
          onKnockout();
        },
      }),
      el('label', {class: 'control'}, [
        el('span', {class: 'label', text: 'keep only the top'}),
        topK,
        el('button', {class: 'link-button keep-top', text: 'by importance, knock out the rest', onclick: keepTop}),
      ]),
    ]),
  ]);
}

function knockoutResult(body) {
  const result = body.knockout;
  if (!result) return el('div', {class: 'knockout-result empty', text: 'No head knocked out: every head as trained.'});
  const loss = result.probe_loss;
  return el('div', {class: 'knockout-result'}, [
    el('div', {
      class: 'knockout-summary',
      text:
        `${result.heads_off.length} head(s) off. Greedy output: “${result.greedy_before.join(' ')}” → ` +
        `“${result.greedy_after.join(' ')}”` +
        (loss.before === null ? '' : `; probe-set loss ${loss.before.toFixed(4)} → ${loss.after.toFixed(4)} (${(loss.after - loss.before >= 0 ? '+' : '') + (loss.after - loss.before).toFixed(4)})`),
    }),
    el('table', {class: 'delta-table'}, [
      el('tr', {}, [el('th', {text: 'token'}), el('th', {text: 'log p before'}), el('th', {text: 'after'}), el('th', {text: 'change'})]),
      ...body.output_tokens.map((token, index) => {
        const change = result.log_probability_change[index];
        return el('tr', {}, [
          el('td', {text: token}),
          el('td', {text: body.confidence[index].log_probability.toFixed(4)}),
          el('td', {class: 'after', text: result.log_probability_after[index].toFixed(4)}),
          el('td', {
            class: 'delta',
            'data-value': change,
            style: `background:${attributionColour(change, 3)}`,
            text: (change >= 0 ? '+' : '') + change.toFixed(4),
          }),
        ]);
      }),
    ]),
  ]);
}

// The whole section for one /explain answer. `view` keeps the page's choices across redraws:
// {picked, method, off: Set of 'kind/layer/head', topK}; `onKnockout()` asks again with view.off.
export function explainView(body, view, onKnockout, name) {
  view.picked = Math.min(view.picked ?? 0, body.output_tokens.length - 1);
  view.method = view.method || 'integrated_gradients';
  const section = el('div', {class: 'explain', 'data-ready': 'true'});
  const redraw = () => section.replaceWith(explainView(body, view, onKnockout, name));
  const methods = el(
    'select',
    {
      'data-control': 'method',
      onchange: (event) => {
        view.method = event.target.value;
        redraw();
      },
    },
    Object.entries(METHODS).map(([value, text]) => el('option', {value, text, selected: value === view.method}))
  );
  const rollout = body.rollout;
  section.append(
    el('h3', {text: 'Confidence: probability of each token (hover for the top 5), entropy in the tooltip'}),
    confidenceRow(body, view, redraw),
    el('h3', {text: 'Attribution: which source tokens the picked output token depends on'}),
    el('label', {class: 'control'}, [el('span', {class: 'label', text: 'method'}), methods]),
    attributionRow(body, view),
    el('div', {class: 'matrices'}, [
      matrixView(body.output_tokens, body.source_tokens, body.attribution[view.method], {
        title: `${METHODS[view.method]} (rows: output tokens, each row scaled to its largest |value|)`,
        name: `${name}_attribution`,
        perRow: true,
      }),
      matrixView(body.output_tokens, body.source_tokens, rollout.cross, {
        title: 'attention rollout: source words each output token draws on, through every layer',
        name: `${name}_rollout`,
      }),
    ]),
    el('h3', {text: 'Head knock-out'}),
    knockoutControls(body, view, onKnockout),
    knockoutResult(body)
  );
  return section;
}

export function offList(view) {
  return [...view.off].map((key) => {
    const [kind, layer, head] = key.split('/');
    return [kind, Number(layer), Number(head)];
  });
}
