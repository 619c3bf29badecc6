#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx's loader), so a clone works without a build step.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli/main.ts');
