// The test mocks: MSW handlers from the spec. Runs in Node (`msw/node`) and in a browser
// (`msw/browser`, the service worker) alike; the hooks are in `@svc/react`.

export type { StatefulRequest } from './answers.js';
export type { Collection } from './collections.js';
export { findCollections } from './collections.js';
export { BUNDLED_DOCUMENT } from './document.js';
export type { Answer, Choice } from './examples.js';
export { exampleAnswer, operationById, preferred } from './examples.js';
export type { Transition } from './lifecycle.js';
export { idMaker, TRANSITIONS, transitionOf } from './lifecycle.js';
export type { Choices, MockOptions, StatusOf, SvcMock } from './mock.js';
export { createMock } from './mock.js';
export type { ScreenMockOptions } from './screens.js';
export { screenHandlers, simulatedScreenPng } from './screens.js';
export { seedFromExamples } from './seed.js';
export type { OperationRecord, Resource, StateOptions, Stored } from './state.js';
export { MockState } from './state.js';
export { statefulAnswer } from './stateful.js';
export type { TerminalMockOptions } from './terminals.js';
export { terminalHandlers } from './terminals.js';
