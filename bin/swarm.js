#!/usr/bin/env node
// The `swarm` command: runs the compiled CLI in dist/ (built by `npm run build`, or shipped in the package).
import '../dist/cli/main.js';
