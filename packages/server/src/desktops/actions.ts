import type { Schema } from '@svc/contract';
import { INPUT_BOUNDS } from '../computers/screen-limits.js';
import type { FieldViolation } from '../platform/errors.js';

/** One input action, as the spec has it. */
export type InputAction = Schema<'InputAction'>;

/** A screen's size in pixels. */
export interface ScreenSize {
  width: number;
  height: number;
}

type Field = Exclude<keyof InputAction, 'type'>;

/** The fields each action type takes (besides `type`): required, then optional. */
const FIELDS: Record<InputAction['type'], { required: Field[]; optional: Field[] }> = {
  move: { required: ['x', 'y'], optional: [] },
  click: { required: [], optional: ['x', 'y', 'button', 'count'] },
  drag: { required: ['x', 'y', 'to_x', 'to_y'], optional: ['button'] },
  scroll: { required: [], optional: ['x', 'y', 'delta_x', 'delta_y'] },
  type: { required: ['text'], optional: [] },
  key: { required: ['keys'], optional: [] },
  wait: { required: ['milliseconds'], optional: [] },
};

/**
 * Everything wrong with a request's actions that the schema cannot say: a field the type does not
 * take or lacks, `x` without `y`, a point outside this screen, a scroll of nothing, too long a wait in
 * all. The schema has already bounded counts, lengths and ranges.
 *
 * @example
 * checkActions([{ type: 'move', x: 2000, y: 10 }], { width: 1280, height: 800 });
 * // [{ field: 'actions[0].x', description: "must be less than the screen's width, 1280" }]
 */
export function checkActions(actions: readonly InputAction[], screen: ScreenSize): FieldViolation[] {
  const violations: FieldViolation[] = [];
  let waited = 0;
  actions.forEach((action, index) => {
    const at = (field: string) => `actions[${index}].${field}`;
    const fields = FIELDS[action.type];
    if (!fields) {
      violations.push({ field: at('type'), description: `is not an action this server knows` });
      return;
    }
    for (const field of fields.required)
      if (action[field] === undefined)
        violations.push({ field: at(field), description: `a ${action.type} action needs ${field}` });
    for (const field of Object.keys(action) as (keyof InputAction)[])
      if (field !== 'type' && !fields.required.includes(field) && !fields.optional.includes(field))
        violations.push({ field: at(field), description: `a ${action.type} action does not take ${field}` });
    if ((action.x === undefined) !== (action.y === undefined))
      violations.push({ field: at(action.x === undefined ? 'x' : 'y'), description: 'x and y go together' });
    for (const [field, limit, side] of [
      ['x', screen.width, 'width'],
      ['to_x', screen.width, 'width'],
      ['y', screen.height, 'height'],
      ['to_y', screen.height, 'height'],
    ] as const) {
      const value = action[field];
      if (value !== undefined && value >= limit)
        violations.push({
          field: at(field),
          description: `must be less than the screen's ${side}, ${limit}`,
        });
    }
    if (action.type === 'scroll' && !action.delta_x && !action.delta_y)
      violations.push({
        field: at('delta_y'),
        description: 'a scroll needs delta_x or delta_y other than 0',
      });
    if (action.type === 'wait') waited += action.milliseconds ?? 0;
  });
  if (waited > INPUT_BOUNDS.totalWaitMs)
    violations.push({
      field: 'actions',
      description: `waits at most ${INPUT_BOUNDS.totalWaitMs} ms in all; these wait ${waited} ms`,
    });
  return violations;
}

/** X's button numbers. */
const BUTTONS = { left: '1', middle: '2', right: '3' } as const;

/** Milliseconds between the keystrokes of a `type` action (xdotool's default is 12). */
const TYPE_DELAY_MS = 4;

/**
 * The xdotool arguments of one action (xdotool chains commands in one invocation): what the Engine
 * driver runs inside the computer.
 *
 * @example
 * xdotoolArgs({ type: 'click', x: 10, y: 20, count: 2 });
 * // ['mousemove', '10', '20', 'click', '--repeat', '2', '--delay', '80', '1']
 */
export function xdotoolArgs(action: InputAction): string[] {
  const at =
    action.x === undefined || action.y === undefined ? [] : ['mousemove', `${action.x}`, `${action.y}`];
  const button = BUTTONS[action.button ?? 'left'];
  switch (action.type) {
    case 'move':
      return at;
    case 'click':
      return [...at, 'click', '--repeat', `${action.count ?? 1}`, '--delay', '80', button];
    case 'drag':
      return [...at, 'mousedown', button, 'mousemove', `${action.to_x}`, `${action.to_y}`, 'mouseup', button];
    case 'scroll': {
      const turns: string[] = [];
      const wheel = (delta: number | undefined, positive: string, negative: string) => {
        if (delta)
          turns.push(
            'click',
            '--repeat',
            `${Math.abs(delta)}`,
            '--delay',
            '10',
            delta > 0 ? positive : negative,
          );
      };
      wheel(action.delta_y, '5', '4');
      wheel(action.delta_x, '7', '6');
      return [...at, ...turns];
    }
    case 'type':
      return ['type', '--delay', `${TYPE_DELAY_MS}`, '--', action.text ?? ''];
    case 'key':
      return ['key', '--clearmodifiers', '--', action.keys ?? ''];
    case 'wait':
      return ['sleep', `${(action.milliseconds ?? 0) / 1000}`];
    default:
      return []; // checkActions refuses a type this server does not know
  }
}

/** What the desktop helper does for one action (helper.ts): pointer steps through XTEST, keys through xdotool. */
export type HelperStep =
  | { op: 'm'; x: number; y: number }
  | { op: 'd' | 'u'; button: number }
  | { op: 'w'; ms: number }
  | { op: 'x'; args: string[] };

/**
 * The helper's steps of one action: the same effect as {@link xdotoolArgs} (the same buttons, the
 * same pauses between repeated clicks and wheel turns), with the pointer's moves and buttons sent
 * over the helper's own connection; keys and text go to xdotool.
 *
 * @example
 * helperSteps({ type: 'click', x: 10, y: 20 }); // [{ op: 'm', x: 10, y: 20 }, { op: 'd', button: 1 }, { op: 'u', button: 1 }]
 */
export function helperSteps(action: InputAction): HelperStep[] {
  const steps: HelperStep[] =
    action.x === undefined || action.y === undefined ? [] : [{ op: 'm', x: action.x, y: action.y }];
  const press = (button: number, times: number, pauseMs: number) => {
    for (let i = 0; i < times; i++) {
      if (i > 0) steps.push({ op: 'w', ms: pauseMs });
      steps.push({ op: 'd', button }, { op: 'u', button });
    }
  };
  const button = Number(BUTTONS[action.button ?? 'left']);
  switch (action.type) {
    case 'move':
      return steps;
    case 'click':
      press(button, action.count ?? 1, 80);
      return steps;
    case 'drag':
      steps.push(
        { op: 'd', button },
        { op: 'm', x: action.to_x ?? 0, y: action.to_y ?? 0 },
        { op: 'u', button },
      );
      return steps;
    case 'scroll':
      if (action.delta_y) press(action.delta_y > 0 ? 5 : 4, Math.abs(action.delta_y), 10);
      if (action.delta_x) press(action.delta_x > 0 ? 7 : 6, Math.abs(action.delta_x), 10);
      return steps;
    case 'wait':
      return [{ op: 'w', ms: action.milliseconds ?? 0 }];
    default:
      return [{ op: 'x', args: xdotoolArgs(action) }];
  }
}
