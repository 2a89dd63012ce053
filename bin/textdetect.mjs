#!/usr/bin/env node
// Runs the compiled CLI (`npm run build`, done by `npm install` through `prepare`): plain node, no
// TypeScript loader, so start-up costs what node's own does.
try {
  // First, on its own: on a Node older than 22 it stops with what to do, before the CLI is loaded.
  await import('../dist/src/node-version.js');
  await import('../dist/src/cli/main.js');
} catch (err) {
  // Only a missing build gets the hint; any other failure of the CLI propagates as it is.
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && /dist\/src\/(cli\/main|node-version)\.js/.test(String(err.message))) {
    process.stderr.write('textdetect: the compiled CLI is missing; run `npm run build` (or `npm install`) in the textdetect folder.\n');
    process.exitCode = 1;
  } else {
    throw err;
  }
}
