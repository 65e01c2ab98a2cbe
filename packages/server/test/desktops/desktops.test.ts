import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkActions, PerSecond, scaledSize, xdotoolArgs } from '../../src/desktops/index.js';
import type { Team, TestApp } from '../support/app.js';
import { openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

// Screens and input (design §18) on the simulated driver, whose screen is SIMULATED (a fixed picture,
// input echoed): these tests hold the rules around it, one attack per rule: who may look and who may
// touch, another workspace's computer, a computer without a display, the bounds, the rate, the audit line.
describeEngines('desktops: the screen and input rules', (engine) => {
  let t: TestApp;
  let team: Team;
  let desk: string;
  let plain: string;
  const logs: { message: string; fields: Record<string, unknown> }[] = [];
  beforeAll(async () => {
    t = await openTestApp(engine, {
      app: { log: (message, fields) => logs.push({ message, fields: fields ?? {} }) },
    });
    team = await t.team();
    desk = await computer({ image: 'debian-13-desktop', screen: { width: 1024, height: 768 } });
    plain = await computer({ image: 'debian-13' });
  });
  afterAll(() => t.close());
  const ws = (team_ = team) => `/v1/workspaces/${team_.workspace.id}`;

  async function computer(fields: Record<string, unknown>): Promise<string> {
    const created = await t.call('POST', `${ws()}/computers`, {
      token: team.editor.token,
      body: { name: unique('desk'), size: 'small', ...fields },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(202);
    const done = await t.call('GET', `/v1/operations/${created.body.operations[0].id}?wait=10`, {
      token: team.editor.token,
    });
    expect(done.body.operation.state).toBe('succeeded');
    return created.body.computer.id;
  }
  /** The screen, raw: a PNG is not JSON. */
  async function screen(id: string, token: string, query = '') {
    const response = await t.app.fetch(
      new Request(`http://svc.test${ws()}/computers/${id}/screen${query}`, {
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
  }
  const input = (id: string, actions: unknown[], token = team.editor.token) =>
    t.call('POST', `${ws()}/computers/${id}/input`, { token, body: { actions } });

  test('a viewer may look: a PNG of the screen chosen at create, its size and the pointer in headers', async () => {
    const { response, bytes } = await screen(desk, team.viewer.token);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/png');
    expect([...bytes.subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(response.headers.get('content-length')).toBe(String(bytes.length));
    expect(response.headers.get('screen-width')).toBe('1024');
    expect(response.headers.get('screen-height')).toBe('768');
    // The PNG's own size (IHDR) is the screen's.
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([1024, 768]);
  });

  test('max_width and max_height scale the picture down, the headers keep the screen', async () => {
    const { response, bytes } = await screen(desk, team.viewer.token, '?max_width=512&max_height=500');
    expect(response.status).toBe(200);
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    expect([view.getUint32(16), view.getUint32(20)]).toEqual([512, 384]);
    expect(response.headers.get('screen-width')).toBe('1024');
    const tooSmall = await screen(desk, team.viewer.token, '?max_width=4');
    expect(tooSmall.response.status).toBe(400);
  });

  test('an editor sends input: applied in order, the pointer where the last one left it, simulated said', async () => {
    const answer = await input(desk, [
      { type: 'move', x: 10, y: 20 },
      { type: 'click', x: 512, y: 300, button: 'right', count: 2 },
      { type: 'type', text: 'hello' },
      { type: 'key', keys: 'ctrl+s' },
      { type: 'scroll', delta_y: 3 },
      { type: 'wait', milliseconds: 1 },
    ]);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.input).toEqual({ applied: 6, cursor: { x: 512, y: 300 }, simulated: true });
    const { response } = await screen(desk, team.viewer.token);
    expect([response.headers.get('cursor-x'), response.headers.get('cursor-y')]).toEqual(['512', '300']);
  });

  test('every input request is one audit line: the types and count, never the text', async () => {
    const secret = unique('typed-secret');
    const answer = await input(desk, [{ type: 'type', text: secret }]);
    expect(answer.status).toBe(200);
    const requestId = answer.headers.get('request-id');
    const line = logs.find((l) => l.message === 'input sent' && l.fields.request_id === requestId);
    expect(line?.fields).toMatchObject({ computer_id: desk, actions: 1, types: 'type', applied: 1 });
    expect(JSON.stringify(logs)).not.toContain(secret);
  });

  test('a viewer watches the screen live: a frame at once, another only when the pointer moved', async () => {
    const stop = new AbortController();
    const opened = Date.now();
    const response = await t.app.fetch(
      new Request(`http://svc.test${ws()}/computers/${desk}/screen/frames?max_width=256`, {
        headers: { authorization: `Bearer ${team.viewer.token}` },
        signal: stop.signal,
      }),
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    const frames = async (count: number) => {
      const deadline = Date.now() + 5000;
      while ((text.match(/^event: frame$/gm) ?? []).length < count && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      return text
        .split('\n\n')
        .filter((block) => /^event: frame$/m.test(block))
        .map((block) => ({
          id: /^id: (\d+)$/m.exec(block)?.[1],
          ...JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}'),
        }));
    };
    const [first] = await frames(1);
    expect(first).toMatchObject({ id: '1', width: 256, height: 192, screen: { width: 1024, height: 768 } });
    // taken_at is the server's clock when the picture was taken: between the request and its arrival
    // (milliseconds, so it may equal the request's).
    expect(first.taken_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Date.parse(first.taken_at)).toBeGreaterThanOrEqual(opened - 1);
    expect(Date.parse(first.taken_at)).toBeLessThanOrEqual(Date.now());
    expect([...Buffer.from(first.png, 'base64').subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    // Nothing changes: no frame. The pointer moves: one.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect((await frames(1)).length).toBe(1);
    expect((await input(desk, [{ type: 'move', x: 7, y: 9 }])).status).toBe(200);
    const moved = await frames(2);
    expect(moved.map((f) => [f.id, f.cursor])).toEqual([
      ['1', first.cursor],
      ['2', { x: 7, y: 9 }],
    ]);
    expect(Date.parse(moved[1].taken_at)).toBeGreaterThan(Date.parse(first.taken_at));
    stop.abort();
    await reader.cancel().catch(() => {});
  });

  test('the live screen of a computer without a display: 409 no_display; of another workspace: 404', async () => {
    const plainFrames = await t.app.fetch(
      new Request(`http://svc.test${ws()}/computers/${plain}/screen/frames`, {
        headers: { authorization: `Bearer ${team.viewer.token}` },
      }),
    );
    expect(plainFrames.status).toBe(409);
    expect(((await plainFrames.json()) as { error: { details: unknown } }).error.details).toEqual({
      reason: 'no_display',
    });
    const other = await t.team();
    const stranger = await t.app.fetch(
      new Request(`http://svc.test${ws()}/computers/${desk}/screen/frames`, {
        headers: { authorization: `Bearer ${other.viewer.token}` },
      }),
    );
    expect(stranger.status).toBe(404);
  });

  describe('attacks, one per rule', () => {
    test('a viewer sending input: 403 permission_denied', async () => {
      const answer = await input(desk, [{ type: 'click' }], team.viewer.token);
      expect([answer.status, answer.body.error.code]).toEqual([403, 'permission_denied']);
    });

    test("another workspace's computer: 404 not_found, to look and to touch", async () => {
      const other = await t.team();
      const looked = await screen(desk, other.owner.token);
      expect(looked.response.status).toBe(404);
      const touched = await input(desk, [{ type: 'click' }], other.owner.token);
      expect([touched.status, touched.body.error.code]).toEqual([404, 'not_found']);
    });

    test('too many actions (51): 400 invalid_argument', async () => {
      const answer = await input(
        desk,
        Array.from({ length: 51 }, () => ({ type: 'wait', milliseconds: 1 })),
      );
      expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_argument']);
    });

    test('too long a text (1,001 characters): 400 invalid_argument', async () => {
      const answer = await input(desk, [{ type: 'type', text: 'x'.repeat(1001) }]);
      expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_argument']);
    });

    test('a point outside the screen, a field the type does not take, too long waits: 400 naming each', async () => {
      const answer = await input(desk, [
        { type: 'move', x: 1024, y: 0 },
        { type: 'key', keys: 'Return', text: 'no' },
        ...Array.from({ length: 6 }, () => ({ type: 'wait', milliseconds: 2000 })),
      ]);
      expect(answer.status).toBe(400);
      expect(answer.body.error.details.field_violations.map((v: { field: string }) => v.field)).toEqual([
        'actions[0].x',
        'actions[1].text',
        'actions',
      ]);
    });

    test.each([
      ['too wide', { width: 3841, height: 800 }],
      ['too small', { width: 639, height: 480 }],
      ['too tall', { width: 1280, height: 2161 }],
    ])('a screen size out of bounds at create (%s): 400 invalid_argument', async (_, screenSize) => {
      const answer = await t.call('POST', `${ws()}/computers`, {
        token: team.editor.token,
        body: { name: unique('big'), size: 'small', image: 'debian-13-desktop', screen: screenSize },
      });
      expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_argument']);
    });

    test('a screen asked of an image without a display at create: 400 on screen', async () => {
      const answer = await t.call('POST', `${ws()}/computers`, {
        token: team.editor.token,
        body: {
          name: unique('nodisp'),
          size: 'small',
          image: 'debian-13',
          screen: { width: 800, height: 600 },
        },
      });
      expect(answer.status).toBe(400);
      expect(answer.body.error.details.field_violations[0].field).toBe('screen');
    });

    test('a computer without a display: 409 invalid_state, reason no_display, to look and to touch', async () => {
      const looked = await screen(plain, team.viewer.token);
      expect(looked.response.status).toBe(409);
      const error = JSON.parse(new TextDecoder().decode(looked.bytes)).error;
      expect([error.code, error.details]).toEqual(['invalid_state', { reason: 'no_display' }]);
      const touched = await input(plain, [{ type: 'click' }]);
      expect([touched.status, touched.body.error.code, touched.body.error.details.reason]).toEqual([
        409,
        'invalid_state',
        'no_display',
      ]);
    });

    test('a stopped desktop: 409 invalid_state with its state', async () => {
      const id = await computer({ image: 'debian-13-desktop' });
      const stop = await t.call('POST', `${ws()}/computers/${id}/stop`, { token: team.editor.token });
      await t.call('GET', `/v1/operations/${stop.body.operations[0].id}?wait=10`, {
        token: team.editor.token,
      });
      const answer = await input(id, [{ type: 'click' }]);
      expect([answer.status, answer.body.error.code, answer.body.error.details.current_state]).toEqual([
        409,
        'invalid_state',
        'stopped',
      ]);
    });

    test('more than 20 input requests a second to one computer: 429 rate_limited, Retry-After', async () => {
      const id = await computer({ image: 'debian-13-desktop' });
      const answers = await Promise.all(Array.from({ length: 30 }, () => input(id, [{ type: 'click' }])));
      const limited = answers.filter((a) => a.status === 429);
      // A second may turn over during the burst: at least the requests past two windows' worth.
      expect(limited.length).toBeGreaterThanOrEqual(1);
      expect(limited[0]?.body.error.details).toEqual({ policy: 'computer-input', retry_after_seconds: 1 });
      expect(limited[0]?.headers.get('retry-after')).toBe('1');
    });
  });
});

describe('desktops: the pieces', () => {
  test('scaledSize fits inside both maxima, proportions kept, never larger', () => {
    expect(scaledSize({ width: 1280, height: 800 }, { maxWidth: 640 })).toEqual({ width: 640, height: 400 });
    expect(scaledSize({ width: 1280, height: 800 }, { maxWidth: 4000, maxHeight: 200 })).toEqual({
      width: 320,
      height: 200,
    });
    expect(scaledSize({ width: 1280, height: 800 }, {})).toEqual({ width: 1280, height: 800 });
  });

  test('each action is xdotool arguments, text and keys after --', () => {
    expect(xdotoolArgs({ type: 'click', x: 1, y: 2, count: 2, button: 'right' })).toEqual([
      'mousemove',
      '1',
      '2',
      'click',
      '--repeat',
      '2',
      '--delay',
      '80',
      '3',
    ]);
    expect(xdotoolArgs({ type: 'type', text: '--help' }).slice(-2)).toEqual(['--', '--help']);
    expect(xdotoolArgs({ type: 'scroll', delta_y: -2 })).toEqual([
      'click',
      '--repeat',
      '2',
      '--delay',
      '10',
      '4',
    ]);
    expect(xdotoolArgs({ type: 'drag', x: 1, y: 2, to_x: 3, to_y: 4 })).toEqual([
      'mousemove',
      '1',
      '2',
      'mousedown',
      '1',
      'mousemove',
      '3',
      '4',
      'mouseup',
      '1',
    ]);
  });

  test('checkActions: x without y, a scroll of nothing, a drag without its end', () => {
    const screen = { width: 100, height: 100 };
    expect(checkActions([{ type: 'click', x: 1 }], screen).map((v) => v.field)).toEqual(['actions[0].y']);
    expect(checkActions([{ type: 'scroll' }], screen).map((v) => v.field)).toEqual(['actions[0].delta_y']);
    expect(checkActions([{ type: 'drag', x: 1, y: 1 }], screen).map((v) => v.field)).toEqual([
      'actions[0].to_x',
      'actions[0].to_y',
    ]);
  });

  test('PerSecond: the limit within a second, a new window the next', () => {
    let now = 5_000;
    const rate = new PerSecond('computer-input', 2, () => now);
    rate.take('a');
    rate.take('a');
    rate.take('b');
    expect(() => rate.take('a')).toThrow(/at most 2 requests a second/);
    now += 1000;
    expect(() => rate.take('a')).not.toThrow();
  });
});
