/**
 * Screenshots of ICS subscriptions for docs/screenshots (light, dark,
 * 简体中文): the "From URL…" dialog with a first fetch that failed, and the
 * calendar list with a good feed and one whose last refresh failed.
 * `SHOTS_DIR=../docs/screenshots KAIROS_SHOTS=1 npx vitest run
 * --config vitest.browser.config.ts test/shots/feeds.spec.ts` (after
 * `vite build --config vite.mock.config.ts`).
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, test } from "vitest";
import { useApp } from "../browser/harness";

const DIR = process.env.SHOTS_DIR ?? "/tmp/ui-shots";
const open = useApp();

beforeAll(() => {
  mkdirSync(DIR, { recursive: true });
});

for (const [suffix, query, ctx] of [
  ["", "feeds=1", {}],
  ["-dark", "feeds=1&theme=dark", { colorScheme: "dark" as const }],
  ["-zh-CN", "feeds=1&lang=zh-CN", { locale: "zh-CN" }],
] as const) {
  test(`feeds${suffix}`, async () => {
    const { page } = await open(query, ctx);
    await page.click('[data-view="agenda"]');
    await page.waitForSelector(".cal-row.is-feed .feed-error");
    await page.screenshot({ path: join(DIR, `feeds${suffix}.png`) });
    await page.click("#add-calendar");
    await page.waitForSelector("#add-calendar-menu:not([hidden])");
    await page.locator(".sidebar").screenshot({ path: join(DIR, `feeds-menu${suffix}.png`) });
    await page.click("#add-calendar-url");
    await page.fill("#sub-url", "https://intranet.example.org/html/rota.ics");
    await page.fill("#sub-name", "Rota");
    await page.click("#sub-save");
    await page.waitForSelector("#sub-error:not([hidden])");
    await page.screenshot({ path: join(DIR, `subscribe${suffix}.png`) });
    await page.close();
  });
}
