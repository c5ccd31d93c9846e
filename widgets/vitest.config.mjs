// Vitest runs the widget tests in jsdom, against the bundled files the wheel ships.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "jsdom",
    include: ["test/**/*.test.js"],
  },
});
