#!/usr/bin/env node
// The `svc` executable. It only turns on Node's compile cache (V8 code cache on disk, in the OS temp
// directory) before loading the rest, so that every later start skips parsing and compiling the
// bundle: most of what `svc --help` costs.
import { enableCompileCache } from 'node:module';

enableCompileCache?.();
await import('./cli.js');
