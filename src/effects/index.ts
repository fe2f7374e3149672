export * from './port.js';
export { effectsModule, type EffectsModule } from './module.js';
