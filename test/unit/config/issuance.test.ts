import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../../src/config/load.js';
import { minimalDoc } from './fixtures.js';

/** Issue 49: batches (`issuance.batchSize`, a type's `batchSize`), checked at start with the path of each problem. */
function problems(doc: unknown): string[] {
  try {
    validateConfig(doc);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('one-time-use batches in the config (issue 49)', () => {
  it('off by default; an operator default and a per-type size are taken', () => {
    const doc = minimalDoc();
    expect(validateConfig(doc).issuance.batchSize).toBe(1);
    doc.issuance = { batchSize: 5 };
    doc.credentialTypes[0].batchSize = 10;
    doc.credentialTypes.push({ name: 'Single', batchSize: 1, attributes: { A: { type: 'string' } } });
    const config = validateConfig(doc);
    expect(config.issuance.batchSize).toBe(5);
    expect(config.credentialTypes.map((t) => t.batchSize)).toEqual([10, 1]);
  });

  it('a size of 0 or over 100, or not a whole number, is refused naming the path', () => {
    const doc = minimalDoc();
    doc.issuance = { batchSize: 0 };
    doc.credentialTypes[0].batchSize = 101;
    const found = problems(doc);
    expect(found.some((p) => p.startsWith('issuance.batchSize:'))).toBe(true);
    expect(found.some((p) => p.startsWith('credentialTypes[0] (name EmployeeBadge).batchSize:'))).toBe(true);
    const fraction = minimalDoc();
    fraction.credentialTypes[0].batchSize = 2.5;
    expect(problems(fraction).some((p) => p.startsWith('credentialTypes[0] (name EmployeeBadge).batchSize:'))).toBe(
      true,
    );
  });

  it('ISSU_36: a batch type valid for less than two hours is refused (its timestamps are whole hours)', () => {
    const doc = minimalDoc();
    doc.credentialTypes[0].validity = 'PT90M';
    doc.credentialTypes[0].batchSize = 3;
    expect(problems(doc)).toEqual([
      'credentialTypes[0] (name EmployeeBadge).validity: must be at least PT2H for a type issued in batches (batchSize 3): its timestamps are rounded to whole hours',
    ]);
    // the operator's default makes it a batch type too; one credential per request needs no such validity
    const byDefault = minimalDoc();
    byDefault.issuance = { batchSize: 2 };
    byDefault.credentialTypes[0].validity = 'PT1H';
    expect(problems(byDefault)).toHaveLength(1);
    const single = minimalDoc();
    single.credentialTypes[0].validity = 'PT1H';
    expect(problems(single)).toEqual([]);
  });
});
