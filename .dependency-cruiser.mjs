// The layers of src/ and the rules `npm test` checks with dependency-cruiser (test/run-all.ts;
// by hand: npx depcruise src). A module imports from its own folder and from the layers below
// its own; folders on one line are siblings and do not import each other. Type-only imports
// count too: a type pulled from a higher layer ties the code to it all the same.
// The folders are described in docs/development.md ("Layout of src/").
const LAYERS = [
  ['runtime'], // threads, the run-from-source loader, IoError, progress: usable by every layer
  ['chain'], // blocks, txs, scripts, hashes: pure
  ['contract'], // the published paths, formats and router (shipped to edge runtimes as is)
  ['builder', 'ui'], // test chains; the browsing UI (bundled for the browser)
  ['source'], // blk files, RPC, the demo chain
  ['index'], // the LMDB index and its sync
  ['render'], // documents from the index
  ['publish', 'pack'], // writing, staging and publishing a tree; packed trees
  ['hosts'], // host config and edge glue (the pack glue ships the pack reader)
  ['pipeline'], // the build's stages: render on threads, write through publish
  ['site'], // the build as a whole
  ['serve', 'verify'], // reading a built tree
  ['cli-args'], // shared option parsing
  ['commands'],
  ['cli'],
];

/** src/<name>/… for a folder, src/<name>.ts for a top-level module. */
const place = (names) => `^src/(${names.join('|')})(/|\\.ts$)`;

const forbidden = [
  {
    name: 'no-cycle',
    comment: 'An import cycle under src/: modules that load each other cannot be read (or tested) one at a time.',
    severity: 'error',
    from: { path: '^src/' },
    to: { circular: true },
  },
  ...LAYERS.flatMap((level, i) =>
    level.flatMap((name) => {
      const above = [...LAYERS.slice(i + 1).flat(), ...level.filter((n) => n !== name)];
      if (above.length === 0) return [];
      return {
        name: `layer-${name}`,
        comment: `src/${name} may import only from itself and the layers below it (.dependency-cruiser.mjs LAYERS): not from ${above.join(', ')}.`,
        severity: 'error',
        from: { path: place([name]) },
        to: { path: place(above) },
      };
    }),
  ),
  {
    name: 'layer-unlisted',
    comment: 'Every folder under src/ has a place in LAYERS (.dependency-cruiser.mjs).',
    severity: 'error',
    from: { path: '^src/', pathNot: place(LAYERS.flat()) },
    to: {},
  },
];

export default {
  forbidden,
  options: {
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    skipAnalysisNotInRules: true,
  },
};
