import { cleanup } from '@testing-library/react';
import { setupWorker } from 'msw/browser';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { registerMsw } from './msw.js';

const worker = setupWorker();
registerMsw(worker);
beforeAll(async () => {
  await worker.start({ quiet: true, onUnhandledRequest: 'bypass' });
  // The requests below go through the service worker, not an interception in the page.
  if (!navigator.serviceWorker.controller)
    throw new Error('the MSW service worker does not control the page');
});
afterEach(() => {
  cleanup();
  worker.resetHandlers();
});
afterAll(() => worker.stop());
