import { defineConfig } from "vitest/config";

// The production bundle: index.html only. The mocked test page has its own
// config (vite.mock.config.ts) so the fake backend never ships.
export default defineConfig({
  base: "./",
  clearScreen: false,
  server: { port: 5173, strictPort: true, host: "127.0.0.1" },
  build: { outDir: "dist", emptyOutDir: true, target: "es2022", chunkSizeWarningLimit: 1000 },
  test: { include: ["test/unit/**/*.test.ts"], environment: "node" },
});
