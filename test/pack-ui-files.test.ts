// `snapshot build --format pack` writes the browsing UI's static files (index.html marked to read
// the pack, its script and stylesheet) beside the pack, as the tool's own like the host glue: the
// next build neither refuses them as foreign nor leaves them stale, and glue it no longer writes
// (another --hosts) is removed with the directories it leaves empty; a user's file beside them is
// still refused. The reference for the UI's bytes is the tree the same build makes.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot, type BuildOptions } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { HOSTS, tempDir } from './support/memory-builds.js';

const tmp = tempDir('snapshot-pack-ui-');
const UI = ['index.html', 'assets/app.js', 'assets/app.css'];
const META = '<meta name="chain-snapshot-pack" content="./">\n';

describe('build --format pack: the UI files beside the pack', () => {
  const demo = (outDir: string, extra: Partial<BuildOptions> = {}) => buildSnapshot({ source: demoSource(), outDir, hosts: HOSTS, height: 20, ...extra });
  let tree = '';
  let out = '';
  const read = (dir: string, f: string) => readFileSync(join(dir, f), 'utf8');

  beforeAll(async () => {
    tree = tmp('tree');
    out = tmp('pack');
    await demo(tree);
    await demo(out, { format: 'pack' });
  }, 120_000);

  it('are the tree\'s UI files, index.html marked to read the pack in its own directory; the site info is not among them', () => {
    expect(read(out, 'assets/app.js')).toBe(read(tree, 'assets/app.js'));
    expect(read(out, 'assets/app.css')).toBe(read(tree, 'assets/app.css'));
    const html = read(out, 'index.html');
    expect(html.split(META).length).toBe(2);
    expect(html.replace(META, '')).toBe(read(tree, 'index.html'));
    expect(existsSync(join(out, 'assets/site.json'))).toBe(false);
    expect(JSON.parse(read(`${out}.state`, 'pack-glue.json'))).toEqual(expect.arrayContaining(UI));
  });

  it('are the build\'s own across a rebuild: a stale one is replaced, glue of a host no longer asked for is removed, a foreign file is refused', async () => {
    writeFileSync(join(out, 'assets/app.css'), '/* an older UI */');
    await demo(out, { format: 'pack', height: 25 });
    for (const f of UI) expect(read(out, f), f).toBe(f === 'index.html' ? read(tree, f).replace('<meta charset="utf-8">\n', `<meta charset="utf-8">\n${META}`) : read(tree, f));
    expect(existsSync(join(out, 'netlify.toml'))).toBe(true);

    await demo(out, { format: 'pack', height: 25, hosts: ['cloudflare'] });
    for (const f of ['netlify.toml', '_netlify']) expect(existsSync(join(out, f)), f).toBe(false);
    for (const f of [...UI, '_pack-worker/index.js']) expect(existsSync(join(out, f)), f).toBe(true);
    expect(JSON.parse(read(`${out}.state`, 'pack-glue.json')).filter((p: string) => p.startsWith('_netlify') || p === 'netlify.toml')).toEqual([]);

    writeFileSync(join(out, 'assets', 'mine.js'), '// mine');
    await expect(demo(out, { format: 'pack', height: 25 })).rejects.toThrow(/assets\/mine\.js.*--force/);
    expect(read(out, 'assets/mine.js')).toBe('// mine');
  }, 120_000);
});
