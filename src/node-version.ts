/**
 * The Node.js version check every entry point (service, CLI, bots, the test run) imports first.
 *
 * On an older Node the rest fails later and misleadingly (the bots blamed their database folder,
 * tests failed one by one), so this stops at once and says what to do. Import it before anything
 * else: ES modules are evaluated in import order, so nothing imported after it runs. It imports
 * nothing and uses only what Node has had for years, so it works on any version that can load it.
 */
const REQUIRED_MAJOR = 22;

const running = process.versions.node;
if (!(Number(running.split('.')[0]) >= REQUIRED_MAJOR)) {
  process.stderr.write(
    `textdetect needs Node.js ${REQUIRED_MAJOR} or newer; this is ${running}.\n` +
      `README, "Quick start": "Node.js ${REQUIRED_MAJOR} or newer (.nvmrc)". Install it (with nvm: \`nvm install\` in the textdetect folder, which reads .nvmrc) and run the command again with that node.\n`,
  );
  process.exit(1);
}

export {};
