// Lists the MCP server keeps in code, against the spec. ACTION_HINTS is a judgment per action (the spec
// has no keyword for "stopping ends running processes"), so its keys are typed as operationIds and this
// test makes the set of keys follow the spec's actions: a new action fails here until someone judges it.
import { loadDocument, type OpenApiDocument } from '@svc/contract';
import { describe, expect, it } from 'vitest';
import { ACTION_HINTS, isAction } from '../src/annotations.js';
import { buildTools } from '../src/tools.js';

/** operationIds of the tools that act on an existing resource (POST to a path without GET), in spec order. */
function actionTools(document: OpenApiDocument): string[] {
  return buildTools(document)
    .filter((tool) => isAction(tool.operation, Object.keys(document.paths[tool.operation.path] ?? {})))
    .map((tool) => tool.operation.operationId);
}

/** One line per action without judged hints, and per entry that is no action (any more). */
function hintDrift(actions: readonly string[], judged: readonly string[]): string[] {
  return [
    ...actions
      .filter((id) => !judged.includes(id))
      .map((id) => `${id}: an action of the spec without an entry in ACTION_HINTS (judge its hints)`),
    ...judged
      .filter((id) => !actions.includes(id))
      .map((id) => `${id}: in ACTION_HINTS but not an action tool of the spec`),
  ];
}

describe('ACTION_HINTS follows the spec', () => {
  const document = loadDocument();

  it('has an entry for every action of the spec and for nothing else', () => {
    const actions = actionTools(document);
    expect(actions.length).toBeGreaterThan(0);
    expect(hintDrift(actions, Object.keys(ACTION_HINTS))).toEqual([]);
  });

  it('fails, naming the operation, for an action added to the spec and for a stale entry', () => {
    const changed = structuredClone(document);
    const stop = changed.paths['/workspaces/{workspace}/computers/{computer}/stop'] as {
      post: { operationId: string };
    };
    changed.paths['/workspaces/{workspace}/computers/{computer}/hibernate'] = {
      post: { ...structuredClone(stop.post), operationId: 'hibernateComputer' },
    };
    expect(hintDrift(actionTools(changed), [...Object.keys(ACTION_HINTS), 'rebootComputer'])).toEqual([
      'hibernateComputer: an action of the spec without an entry in ACTION_HINTS (judge its hints)',
      'rebootComputer: in ACTION_HINTS but not an action tool of the spec',
    ]);
  });
});
