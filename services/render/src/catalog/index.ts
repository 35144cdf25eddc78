export { loadBuiltinTemplates, type BuiltinTemplate } from "./builtin-loader";
export { compileTemplate } from "./handlebars";
export { pageSettingsOf } from "./catalog";
export { engineJob, type TemplateSettings } from "./engine-job";
