#!/usr/bin/env node
// Runs the compiled CLI (`npm run build`, done by `npm install` through `prepare`): plain node, no
// TypeScript loader, so start-up costs what node's own does.
try {
  await import('../dist/src/cli/main.js');
} catch (err) {
  // Only a missing build gets the hint; any other failure of the CLI propagates as it is.
  if (err?.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/src/cli/main.js')) {
    process.stderr.write('textdetect: the compiled CLI is missing; run `npm run build` (or `npm install`) in the textdetect folder.\n');
    process.exitCode = 1;
  } else {
    throw err;
  }
}
