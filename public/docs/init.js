// Swagger UI's start-up, in its own file because the page's Content-Security-Policy allows
// no inline script. `validatorUrl: null`: no badge fetched from validator.swagger.io, so the
// page makes no request to another origin.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  validatorUrl: null,
  deepLinking: true,
  tryItOutEnabled: false,
  persistAuthorization: false,
});
