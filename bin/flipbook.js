#!/usr/bin/env node
/* global process */
// The service targets Node 24, which runs its TypeScript directly.
// `npm start` and `npx flipbook` put the project's Node 24 (the `node` package) first on PATH.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(`flipbook needs Node 24 or newer (this is ${process.version}). Run it through npm: "npx flipbook …" or "npm start".\n`);
  process.exit(1);
}
await import('../src/cli/main.ts');
