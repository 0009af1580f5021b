import { defineConfig } from "vitest/config";

// Browser tests: playwright-core drives Debian's Chromium against the built
// mock page (npm run test:browser builds it first). One file at a time: the
// machine has two cores and each file starts its own browser.
export default defineConfig({
  test: {
    // `npm run shots` takes screenshots instead of running the tests.
    include: process.env.KAIROS_SHOTS ? ["test/shots/*.spec.ts"] : ["test/browser/**/*.spec.ts"],
    environment: "node",
    fileParallelism: false,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
