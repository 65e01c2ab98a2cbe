// The detach escape of `svc computers shell`: `Ctrl-] d`, found across chunks, nothing typed lost.
import { describe, expect, it } from 'vitest';
import { detachEscape } from '../../src/terminal/escape.js';

const cases: [string, { given: number[][]; want: { pass: number[]; detach: boolean } }][] = [
  ['plain bytes pass', { given: [[0x61, 0x62]], want: { pass: [0x61, 0x62], detach: false } }],
  ['Ctrl-] d detaches', { given: [[0x61, 0x1d, 0x64, 0x62]], want: { pass: [0x61], detach: true } }],
  ['Ctrl-] D detaches too', { given: [[0x1d, 0x44]], want: { pass: [], detach: true } }],
  ['across chunks', { given: [[0x61, 0x1d], [0x64]], want: { pass: [0x61], detach: true } }],
  ['Ctrl-] twice sends one', { given: [[0x1d, 0x1d, 0x64]], want: { pass: [0x1d, 0x64], detach: false } }],
  [
    'Ctrl-] then another byte sends both',
    { given: [[0x1d, 0x78]], want: { pass: [0x1d, 0x78], detach: false } },
  ],
  ['Ctrl-C is the program’s', { given: [[0x03]], want: { pass: [0x03], detach: false } }],
];

describe('detachEscape', () => {
  it.each(cases)('%s', (_, { given, want }) => {
    const detacher = detachEscape();
    const pass: number[] = [];
    let detach = false;
    for (const chunk of given) {
      const out = detacher.feed(Uint8Array.from(chunk));
      pass.push(...out.pass);
      if (out.detach) {
        detach = true;
        break;
      }
    }
    expect({ pass, detach }).toEqual(want);
  });
});
