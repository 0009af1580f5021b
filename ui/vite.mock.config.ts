import { resolve } from "node:path";
import { defineConfig } from "vite";

// The browser tests' page: the real UI with the IPC answered by an in-memory
// fake (src/mock/fake.ts via test/mock/entry.ts). Built to .mock-dist/, which
// is never shipped (Tauri loads dist/).
export default defineConfig({
  base: "./",
  clearScreen: false,
  logLevel: "warn",
  build: {
    outDir: ".mock-dist",
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 1000,
    rollupOptions: { input: { mock: resolve(import.meta.dirname, "mock.html") } },
  },
});
