import { describe, it, expect } from 'vitest';
import { PairwiseSubjects } from '../../../src/identity/subject.js';

describe('pairwise subjects (OIDC Core §8.1, issue 18)', () => {
  const subjects = new PairwiseSubjects('secret-1');

  it('are stable for one client and one person, and differ between clients', () => {
    const a = subjects.of('client-a', ['idv', 'https://idv.example', 'person-1']);
    expect(subjects.of('client-a', ['idv', 'https://idv.example', 'person-1'])).toBe(a);
    expect(subjects.of('client-b', ['idv', 'https://idv.example', 'person-1'])).not.toBe(a);
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('differ for another person, another issuer, and do not run parts together', () => {
    const a = subjects.of('c', ['idv', 'https://idv.example', 'person-1']);
    expect(subjects.of('c', ['idv', 'https://idv.example', 'person-2'])).not.toBe(a);
    expect(subjects.of('c', ['idv', 'https://other.example', 'person-1'])).not.toBe(a);
    expect(subjects.of('c', ['a', 'bc'])).not.toBe(subjects.of('c', ['ab', 'c']));
  });

  it('depend on the deployment secret: another deployment cannot compute them', () => {
    expect(new PairwiseSubjects('secret-2').of('c', ['x'])).not.toBe(subjects.of('c', ['x']));
  });
});
