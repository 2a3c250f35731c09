#!/usr/bin/env node
// The package's `isr` bin. The CLI runs from its TypeScript source, through tsx.
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
