import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/service-commands.ts';

const read = (file: string) => readFileSync(`${ROOT}/${file}`, 'utf8');

/** The folders directly under src/, as the tree has them now. */
const srcRooms = readdirSync(`${ROOT}/src`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `src/${entry.name}/`)
  .sort();

/** README's "Layout" block: the text between its fence lines. */
function readmeLayout(): string {
  const block = /^## Layout\n\n```\n([\s\S]*?)\n```$/m.exec(read('README.md'));
  if (!block) throw new Error('README.md has no "## Layout" section with a fenced block');
  return block[1]!;
}

/** The map of docs/architecture.md: its first section, up to the next heading of its level. */
function architectureMap(): string {
  const section = /^## The map\n([\s\S]*?)\n## /m.exec(read('docs/architecture.md'));
  if (!section) throw new Error('docs/architecture.md has no "## The map" section');
  return section[1]!;
}

/** The folders a text names as `src/x/`. */
function namedRooms(text: string): Set<string> {
  const named = new Set<string>();
  for (const match of text.matchAll(/src\/([\w-]+)\//g)) named.add(`src/${match[1]}/`);
  return named;
}

/** The folders of `rooms` that `text` does not name. */
const unnamed = (text: string, rooms: readonly string[]) => rooms.filter((room) => !namedRooms(text).has(room));

describe('the map is the territory', () => {
  it('README\'s Layout names every top-level folder of src/, and no folder that is gone', () => {
    expect(srcRooms.length).toBeGreaterThan(10);
    expect(unnamed(readmeLayout(), srcRooms)).toEqual([]);
    expect([...namedRooms(readmeLayout())].filter((room) => !srcRooms.includes(room))).toEqual([]);
  });

  it('docs/architecture.md opens with the map: at most 60 lines, every folder of src/ named, each kind of change placed', () => {
    const map = architectureMap();
    expect(/^## .*$/m.exec(read('docs/architecture.md'))?.[0]).toBe('## The map');
    expect(map.split('\n').length).toBeLessThanOrEqual(60);
    expect(unnamed(map, srcRooms)).toEqual([]);
    expect([...namedRooms(map)].filter((room) => !srcRooms.includes(room))).toEqual([]);
    for (const change of ['a new column', 'a new resource', 'a new check on the public path', 'a new webhook event', 'a new CLI command', 'a new setting']) {
      expect(map).toContain(`| ${change} |`);
    }
  });

  it('a folder added to src/ and named nowhere fails the check', () => {
    expect(unnamed(readmeLayout(), [...srcRooms, 'src/newly-added/'])).toEqual(['src/newly-added/']);
    expect(unnamed(architectureMap(), [...srcRooms, 'src/newly-added/'])).toEqual(['src/newly-added/']);
  });
});
