package dev.distlock.actuate;

import java.io.IOException;
import java.security.Principal;
import java.util.Set;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;

import org.springframework.util.StringUtils;

/**
 * Stands in for Spring Security in tests: a request with an {@value #USER} header is authenticated as that user, with
 * the roles of its {@value #ROLES} header. Actuator reads the caller from the servlet request
 * ({@code getUserPrincipal()}, {@code isUserInRole(role)}), which is also where Spring Security's request wrapper
 * puts the authenticated user, so endpoints see the same as with Spring Security's HTTP Basic or form login.
 */
class TestPrincipalFilter implements Filter {

	static final String USER = "X-Test-User";

	static final String ROLES = "X-Test-Roles";

	@Override
	public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
			throws IOException, ServletException {
		HttpServletRequest http = (HttpServletRequest) request;
		String user = http.getHeader(USER);
		if (user == null) {
			chain.doFilter(request, response);
			return;
		}
		Set<String> roles = StringUtils.commaDelimitedListToSet(http.getHeader(ROLES));
		Principal principal = () -> user;
		chain.doFilter(new HttpServletRequestWrapper(http) {

			@Override
			public Principal getUserPrincipal() {
				return principal;
			}

			@Override
			public String getRemoteUser() {
				return user;
			}

			@Override
			public boolean isUserInRole(String role) {
				return roles.contains(role);
			}

		}, response);
	}

}
