// Vite config of the dashboard (src/gateway/web → dist/web). Built by `npm run build:web` (src/gateway/web/build.ts), which also writes
// the .gz/.br siblings the server sends. `npx vite --config vite.config.ts` runs a dev server that proxies the account
// API and the docs to an rpcgate on :8080 (`npm start`).
import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('./src/gateway/web', import.meta.url));
const outDir = fileURLToPath(new URL('./dist/web', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  plugins: [react()],
  // generated/account/client.ts imports the client runtime as '@rpcgate/client': tsconfig.json "paths" map it to the source.
  resolve: { tsconfigPaths: true },
  // Everything offline: no CDN, no public folder, no external fonts.
  publicDir: false,
  build: {
    outDir,
    emptyOutDir: true,
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
  server: {
    proxy: {
      '/api': 'http://127.0.0.1:8080',
      '/docs': 'http://127.0.0.1:8080',
    },
  },
});
