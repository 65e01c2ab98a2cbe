#!/usr/bin/env node
// The `svc-server` command. A file of its own rather than `dist/main.js` itself: installing the
// workspace links each dependency's commands before anything is built, and a command whose file does
// not exist yet is a warning at every install.
import '../dist/main.js';
