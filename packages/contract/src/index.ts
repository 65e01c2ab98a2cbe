// The main entry: everything of the browser-safe entry, which holds the package's one export list,
// and `loadDocument`, which reads the bundle from disk.
export * from './browser.js';
export { loadDocument } from './document.js';
