import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { newId } from '../../src/platform/ids.js';
import type { Team, TestApp } from '../support/app.js';
import { errorOf, openTestApp, unique } from '../support/app.js';
import { describeEngines } from '../support/databases.js';

describeEngines('handlers: workspaces and members', (engine) => {
  let t: TestApp;
  let team: Team;
  beforeAll(async () => {
    t = await openTestApp(engine, {
      env: { SVC_QUOTA_WORKSPACES_PER_PRINCIPAL: '3', SVC_QUOTA_MEMBERS_PER_WORKSPACE: '6' },
    });
    team = await t.team();
  });
  afterAll(() => t.close());
  const ws = () => `/v1/workspaces/${team.workspace.name}`;

  test('create: 201 with Location; the caller is owner; /me lists it with the role', async () => {
    const caller = await t.user();
    const name = unique('mine');
    const created = await t.call('POST', '/v1/workspaces', { token: caller.token, body: { name } });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toBe(`/v1/workspaces/${created.body.workspace.id}`);
    expect(created.body.workspace).toMatchObject({ name, display_name: name });
    const me = await t.call('GET', '/v1/me', { token: caller.token });
    expect(me.body.identity.workspaces).toEqual([
      { id: created.body.workspace.id, name, display_name: name, role: 'owner' },
    ]);
  });

  test.each([
    ['a taken name', () => team.workspace.name, 409, 'already_exists'],
    ['a name shaped like an id', () => newId(), 400, 'invalid_argument'],
    ['not a DNS label', () => 'Not-A-Label', 400, 'invalid_argument'],
  ])('create with %s: %i %s', async (_, name, status, code) => {
    const answer = await t.call('POST', '/v1/workspaces', {
      token: team.owner.token,
      body: { name: name() },
    });
    expect(answer.status).toBe(status);
    expect(errorOf(answer).code).toBe(code);
    if (code === 'invalid_argument') expect(errorOf(answer).details.field_violations[0].field).toBe('name');
  });

  test('quota: workspaces per principal → 403 quota_exceeded with details', async () => {
    const caller = await t.user();
    for (let i = 0; i < 3; i++)
      expect(
        (await t.call('POST', '/v1/workspaces', { token: caller.token, body: { name: unique('q') } })).status,
      ).toBe(201);
    const over = await t.call('POST', '/v1/workspaces', { token: caller.token, body: { name: unique('q') } });
    expect(over.status).toBe(403);
    expect(errorOf(over)).toMatchObject({
      code: 'quota_exceeded',
      details: { quota: 'workspaces_per_principal', limit: 3 },
    });
  });

  test.each([
    ['viewer reads', 'viewer', 'GET', '', undefined, 200],
    ['outsider gets 404 (existence does not leak)', 'outsider', 'GET', '', undefined, 404],
    ['outsider gets 404 for members too', 'outsider', 'GET', '/members', undefined, 404],
    ['admin cannot change the workspace', 'admin', 'PATCH', '', { display_name: 'X' }, 403],
    [
      'viewer cannot add members',
      'viewer',
      'POST',
      '/members',
      { principal_id: newId(), role: 'viewer' },
      403,
    ],
    [
      'editor cannot add members',
      'editor',
      'POST',
      '/members',
      { principal_id: newId(), role: 'viewer' },
      403,
    ],
    ['owner changes the display name', 'owner', 'PATCH', '', { display_name: 'Renamed' }, 200],
  ] as const)('authorization: %s', async (_, who, method, suffix, body, status) => {
    const answer = await t.call(method, `${ws()}${suffix}`, { token: team[who].token, body });
    expect(answer.status).toBe(status);
    if (status === 403) expect(errorOf(answer).code).toBe('permission_denied');
    if (status === 404) expect(errorOf(answer).code).toBe('not_found');
  });

  test('a removed member loses access on the next request (roles come from membership, not the token)', async () => {
    const extra = await t.user();
    const added = await t.call('POST', `${ws()}/members`, {
      token: team.owner.token,
      body: { principal_id: extra.id, role: 'viewer' },
    });
    expect((await t.call('GET', ws(), { token: extra.token })).status).toBe(200);
    expect(
      (await t.call('DELETE', `${ws()}/members/${added.body.member.id}`, { token: team.admin.token })).status,
    ).toBe(204);
    expect((await t.call('GET', ws(), { token: extra.token })).status).toBe(404);
  });

  describe('members', () => {
    test('only an owner grants owner; an admin gets 403', async () => {
      const other = await t.user();
      const byAdmin = await t.call('POST', `${ws()}/members`, {
        token: team.admin.token,
        body: { principal_id: other.id, role: 'owner' },
      });
      expect(errorOf(byAdmin).code).toBe('permission_denied');
      const unknown = await t.call('POST', `${ws()}/members`, {
        token: team.admin.token,
        body: { principal_id: newId(), role: 'viewer' },
      });
      expect(errorOf(unknown).code).toBe('not_found');
      const twice = await t.call('POST', `${ws()}/members`, {
        token: team.admin.token,
        body: { principal_id: team.viewer.id, role: 'viewer' },
      });
      expect(errorOf(twice).code).toBe('already_exists');
    });

    test('the last owner can be neither demoted nor removed (409 invalid_state), also by itself', async () => {
      const list = await t.call('GET', `${ws()}/members?limit=200`, { token: team.viewer.token });
      const owner = list.body.members.find((m: { principal_id: string }) => m.principal_id === team.owner.id);
      const demote = await t.call('PATCH', `${ws()}/members/${owner.id}`, {
        token: team.owner.token,
        body: { role: 'admin' },
      });
      expect(demote.status).toBe(409);
      expect(errorOf(demote).code).toBe('invalid_state');
      const leave = await t.call('DELETE', `${ws()}/members/${owner.id}`, { token: team.owner.token });
      expect(errorOf(leave).code).toBe('invalid_state');
      const byAdmin = await t.call('DELETE', `${ws()}/members/${owner.id}`, { token: team.admin.token });
      expect(errorOf(byAdmin).code).toBe('permission_denied');
    });

    test('members quota → 403 quota_exceeded', async () => {
      const local = await t.team(); // 4 members of 6
      const path = `/v1/workspaces/${local.workspace.id}/members`;
      for (let i = 0; i < 2; i++)
        expect(
          (
            await t.call('POST', path, {
              token: local.owner.token,
              body: { principal_id: (await t.user()).id, role: 'viewer' },
            })
          ).status,
        ).toBe(201);
      const over = await t.call('POST', path, {
        token: local.owner.token,
        body: { principal_id: (await t.user()).id, role: 'viewer' },
      });
      expect(errorOf(over)).toMatchObject({
        code: 'quota_exceeded',
        details: { quota: 'members_per_workspace', limit: 6 },
      });
    });
  });

  describe('paging', () => {
    let caller: { id: string; token: string };
    const names: string[] = [];
    beforeAll(async () => {
      caller = await t.user();
      // the caller joins 5 workspaces, each made by its own owner (the per-principal quota is 3 here)
      for (let i = 0; i < 5; i++) {
        const owner = await t.user();
        const created = await t.call('POST', '/v1/workspaces', {
          token: owner.token,
          body: { name: unique('page') },
        });
        names.push(created.body.workspace.name);
        await t.call('POST', `/v1/workspaces/${created.body.workspace.id}/members`, {
          token: owner.token,
          body: { principal_id: caller.id, role: 'viewer' },
        });
      }
    });

    test('limit=2 follows real cursors to the end, newest first, without repeats', async () => {
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const answer = await t.call('GET', `/v1/workspaces?limit=2${cursor ? `&cursor=${cursor}` : ''}`, {
          token: caller.token,
        });
        expect(answer.status).toBe(200);
        seen.push(...answer.body.workspaces.map((w: { name: string }) => w.name));
        expect(answer.body.next_cursor === null).toBe(!answer.body.has_more);
        if (!answer.body.has_more) break;
        cursor = answer.body.next_cursor;
      }
      expect(seen).toEqual([...names].reverse());
    });

    test('a tampered cursor, or one from another list, is 400 invalid_argument; limit > 200 is clamped', async () => {
      const first = await t.call('GET', '/v1/workspaces?limit=1', { token: caller.token });
      const cursor: string = first.body.next_cursor;
      const tampered = `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}`;
      expect(
        errorOf(await t.call('GET', `/v1/workspaces?cursor=${tampered}`, { token: caller.token })).code,
      ).toBe('invalid_argument');
      // the same cursor for another principal's list
      expect(
        errorOf(await t.call('GET', `/v1/workspaces?cursor=${cursor}`, { token: team.owner.token })).code,
      ).toBe('invalid_argument');
      expect((await t.call('GET', '/v1/workspaces?limit=5000', { token: caller.token })).status).toBe(200);
      expect(errorOf(await t.call('GET', '/v1/workspaces?limit=0', { token: caller.token })).code).toBe(
        'invalid_argument',
      );
    });
  });

  test('delete: owner only; 204, then 404', async () => {
    const local = await t.team();
    const path = `/v1/workspaces/${local.workspace.id}`;
    expect(errorOf(await t.call('DELETE', path, { token: local.admin.token })).code).toBe(
      'permission_denied',
    );
    expect((await t.call('DELETE', path, { token: local.owner.token })).status).toBe(204);
    expect(errorOf(await t.call('GET', path, { token: local.owner.token })).code).toBe('not_found');
  });
});
