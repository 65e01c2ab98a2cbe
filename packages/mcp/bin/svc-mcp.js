#!/usr/bin/env node
// The `svc-mcp` command. A file of its own rather than `dist/stdio.js` itself: installing the
// workspace links each dependency's commands before anything is built, and a command whose file does
// not exist yet is a warning at every install.
import '../dist/stdio.js';
