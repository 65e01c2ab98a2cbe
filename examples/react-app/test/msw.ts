// What the component tests share in both projects: the mock of the API, installed on MSW's Node
// interception (test/setup-node.ts) or on its service worker (test/setup-browser.ts).
import { createMock, type SvcMock } from '@svc/react/msw';
import type { RequestHandler } from 'msw';

/** The API address the app is given in tests: same origin, so the service worker sees it either way. */
export const BASE = new URL('/api/v1', location.origin).href;

interface Msw {
  use(...handlers: RequestHandler[]): void;
  resetHandlers(...handlers: RequestHandler[]): void;
}

let msw: Msw | undefined;

/** Called by the setup file of each project with its server or worker. */
export function registerMsw(instance: Msw): void {
  msw = instance;
}

/** A fresh stateful mock of the API (the spec's list examples as data), installed for this test. */
export function freshMock(): SvcMock {
  const mock = createMock({ baseUrl: BASE, stateful: { stepMs: 100 } });
  msw!.resetHandlers(...mock.handlers);
  return mock;
}

/** Puts handlers in front of the mock's for this test (`mock.answer(…)`, `mock.http.get(…)`). */
export function use(...handlers: RequestHandler[]): void {
  msw!.use(...handlers);
}
