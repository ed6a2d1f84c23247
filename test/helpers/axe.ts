import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import type { AxeResults } from 'axe-core';

/**
 * axe-core in Chromium. It is injected as a script tag, which the pages' CSP (script-src 'nonce-…') blocks:
 * open the page in a context made with `bypassCSP: true`.
 */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
export const SCHEMES = ['light', 'dark'] as const;
export const WIDTHS = [1280, 390] as const;
const HEIGHT: Record<(typeof WIDTHS)[number], number> = { 1280: 900, 390: 844 };

type Violation = AxeResults['violations'][number];

/** What to fix, one line per rule and one per node. */
function describeViolations(violations: Violation[]): string {
  return violations
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} [${v.helpUrl}]\n${v.nodes.map((n) => `  - ${n.target.join(' ')}\n    ${(n.failureSummary ?? '').replaceAll('\n', '\n    ')}`).join('\n')}`,
    )
    .join('\n');
}

/** Until the page's transitions and finite animations have ended (colours mid-transition are not the page's). */
async function settle(page: Page): Promise<void> {
  await page.evaluate(() =>
    Promise.all(
      document
        .getAnimations()
        .filter((a) => a.effect?.getComputedTiming().endTime !== Infinity)
        .map((a) => a.finished.catch(() => undefined)),
    ),
  );
}

/**
 * Every axe violation (any impact) of the loaded page in the light and dark scheme at 1280 and 390 px,
 * emulated on the one page, described for whoever fixes them; '' when there are none. `check` runs in
 * each combination first (that the page is still the one meant).
 */
export async function axeViolations(page: Page, check?: () => Promise<void>): Promise<string> {
  await page.addScriptTag({ content: AXE_SOURCE });
  const found: string[] = [];
  for (const scheme of SCHEMES) {
    for (const width of WIDTHS) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: HEIGHT[width] });
      await settle(page);
      if ((await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)) !== (scheme === 'dark'))
        throw new Error(`the ${scheme} scheme was not emulated`);
      await check?.();
      const { violations } = await page.evaluate(() =>
        (window as unknown as { axe: typeof import('axe-core') }).axe.run(document, { resultTypes: ['violations'] }),
      );
      if (violations.length) found.push(`${scheme}, ${width} px:\n${describeViolations(violations)}`);
    }
  }
  return found.join('\n');
}
