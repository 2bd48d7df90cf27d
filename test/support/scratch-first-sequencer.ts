import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Vitest's order (failed, then longest, as its cache knows them), with the files that build a
 * scratch copy of the repository first: each spends minutes running npm scripts, so started last
 * they would run alone at the end of the run; started first they overlap the rest.
 */
export default class ScratchFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    // planted-mistakes.ts builds its scratch copy through scratch-copy.ts.
    const buildsScratch = (file: TestSpecification) => /\/(scratch-copy|planted-mistakes)\.ts'/.test(readFileSync(file.moduleId, 'utf8'));
    return [...sorted.filter(buildsScratch), ...sorted.filter((file) => !buildsScratch(file))];
  }
}
