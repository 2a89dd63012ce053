// The first step of `npm test`: on a Node older than 22 it says so at once, before tsc, Biome and the
// build run (and fail in ways that do not name the cause). Plain JavaScript with no imports, so it runs
// on any Node and in a checkout without node_modules. Its sentence is src/node-version.ts's, which every
// other entry point prints (test/package/node-version.test.ts keeps the two the same).
const REQUIRED_MAJOR = 22;

const running = process.versions.node;
if (!(Number(running.split('.')[0]) >= REQUIRED_MAJOR)) {
  process.stderr.write(
    `textdetect needs Node.js ${REQUIRED_MAJOR} or newer; this is ${running}.\n` +
      `README, "Quick start": "Node.js ${REQUIRED_MAJOR} or newer (.nvmrc)". Install it (with nvm: \`nvm install\` in the textdetect folder, which reads .nvmrc) and run the command again with that node.\n`,
  );
  process.exit(1);
}
