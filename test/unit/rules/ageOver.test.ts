import { describe, expect, it } from 'vitest';
import { ageOverAnswer, withAgeAnswers } from '../../../src/rules/ageOver.js';

/** ISO/IEC 18013-5 §7.2.5: age_over_NN, answered by its own element or by the nearest one that decides it. */
describe('age_over_NN answers (ISO/IEC 18013-5 §7.2.5)', () => {
  it.each([
    [{ age_over_18: true }, true],
    [{ age_over_18: false }, false],
    [{ age_over_21: true }, true], // over 21 is over 18
    [{ age_over_16: false }, false], // not over 16 is not over 18
    [{ age_over_16: true }, undefined], // over 16 says nothing of 18
    [{ age_over_21: false }, undefined], // not over 21 says nothing of 18
    [{ age_over_21: true, age_over_16: false }, undefined], // contradicts itself
    [{ age_over_18: 'yes' }, undefined], // not a boolean
    [{ birth_date: '1815-12-10' }, undefined], // never computed from a birth date
    [{}, undefined],
  ])('%j answers age_over_18 with %s', (disclosed, answer) =>
    expect(ageOverAnswer('age_over_18', disclosed)).toBe(answer),
  );

  it('answers only age_over_NN questions', () =>
    expect(ageOverAnswer('given_name', { given_name: true })).toBeUndefined());

  it('adds the requested answers under their own names and keeps the rest as disclosed', () => {
    expect(withAgeAnswers({ age_over_21: true, family_name: 'L' }, ['age_over_18', 'family_name'])).toEqual({
      age_over_21: true,
      family_name: 'L',
      age_over_18: true,
    });
    expect(withAgeAnswers({ age_over_16: true }, ['age_over_18'])).toEqual({ age_over_16: true });
  });
});
