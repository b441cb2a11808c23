package dev.distlock.interceptor;

import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import dev.distlock.core.LogSafe;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.BeanReference;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;

/**
 * Parses key expressions once (cached per method and expression), checks them against the method's parameters and
 * the bean factory at startup, and evaluates them per call in a {@link MethodBasedEvaluationContext}, so that
 * {@code #name}, {@code #p0} and {@code #a0} bind the arguments and {@code @bean} resolves beans.
 */
class LockKeyEvaluator extends CachedExpressionEvaluator {

	private final Map<ExpressionKey, Expression> expressions = new ConcurrentHashMap<>(64);

	private final @Nullable BeanFactory beanFactory;

	LockKeyEvaluator(@Nullable BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	/**
	 * Parse {@code source} and check that every {@code #variable} names a parameter (or {@code #root}, {@code #this},
	 * {@code #pN}, {@code #aN}) and every {@code @bean} exists.
	 * @throws InvalidLockDeclarationException naming {@code description} and the problem
	 */
	Expression parseAndValidate(String source, Method method, Class<?> targetClass, String description) {
		Expression expression;
		try {
			expression = getExpression(this.expressions, new AnnotatedElementKey(method, targetClass), source);
		}
		catch (ParseException ex) {
			throw new InvalidLockDeclarationException(description, "key",
					"key expression \"" + source + "\" is not valid SpEL: " + ex.getMessage(), ex);
		}
		if (expression instanceof SpelExpression spel) {
			@Nullable String[] names = getParameterNameDiscoverer().getParameterNames(method);
			checkReferences(spel.getAST(), method, names, source, description);
		}
		return expression;
	}

	private void checkReferences(SpelNode node, Method method, @Nullable String @Nullable [] parameterNames, String source,
			String description) {
		if (node instanceof VariableReference) {
			String variable = node.toStringAST().substring(1);
			if (!isKnownVariable(variable, method.getParameterCount(), parameterNames)) {
				throw new InvalidLockDeclarationException(description, "key", "key expression \"" + source
						+ "\" refers to #" + variable + ", which is not a parameter of the method"
						+ describeParameters(method, parameterNames), null);
			}
		}
		else if (node instanceof BeanReference) {
			String bean = node.toStringAST().substring(1);
			if (this.beanFactory != null && !bean.startsWith("&") && !this.beanFactory.containsBean(bean)) {
				throw new InvalidLockDeclarationException(description, "key", "key expression \"" + source
						+ "\" refers to bean '" + bean + "', which does not exist", null);
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			checkReferences(node.getChild(i), method, parameterNames, source, description);
		}
	}

	private static boolean isKnownVariable(String variable, int parameterCount, @Nullable String @Nullable [] names) {
		if (variable.equals("root") || variable.equals("this")) {
			return true;
		}
		if ((variable.startsWith("p") || variable.startsWith("a")) && variable.length() > 1
				&& variable.substring(1).chars().allMatch(Character::isDigit)) {
			return Integer.parseInt(variable.substring(1)) < parameterCount;
		}
		if (names != null) {
			for (String name : names) {
				if (variable.equals(name)) {
					return true;
				}
			}
		}
		return false;
	}

	private static String describeParameters(Method method, @Nullable String @Nullable [] names) {
		if (method.getParameterCount() == 0) {
			return " (it has no parameters)";
		}
		if (names == null) {
			return " (parameter names are not available: compile with -parameters, or use #p0, #p1...)";
		}
		return " (parameters: " + String.join(", ", List.of(names).stream().map(n -> "#" + n).toList()) + ")";
	}

	/**
	 * Evaluate the operation's key for one call: one key, or several (sorted, without duplicates) when the expression
	 * yields a collection or an array.
	 * @throws InvalidLockKeyException if it yields null, a blank string, an empty collection, or fails
	 */
	List<String> keys(LockOperation operation, @Nullable Object[] arguments, @Nullable Object target, Class<?> targetClass) {
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(
				new LockExpressionRoot(operation.method(), arguments, target, targetClass), operation.method(), arguments,
				getParameterNameDiscoverer());
		if (this.beanFactory != null) {
			context.setBeanResolver(new BeanFactoryResolver(this.beanFactory));
		}
		Object value;
		try {
			value = operation.keyExpression().getValue(context);
		}
		catch (EvaluationException ex) {
			throw new InvalidLockKeyException(operation.description() + ": key expression \"" + operation.keySource()
					+ "\" could not be evaluated: " + LogSafe.escape(ex.getMessage()), ex);
		}
		if (value instanceof Collection<?> || (value != null && value.getClass().isArray())) {
			Collection<?> elements = (value instanceof Collection<?> collection) ? collection : arrayElements(value);
			if (elements.isEmpty()) {
				throw invalid(operation, "an empty " + ((value instanceof Collection<?>) ? "collection" : "array"));
			}
			Set<String> keys = new TreeSet<>();
			for (Object element : elements) {
				keys.add(single(operation, element, " element"));
			}
			return new ArrayList<>(keys);
		}
		return List.of(single(operation, value, ""));
	}

	private static String single(LockOperation operation, @Nullable Object value, String what) {
		if (value == null) {
			throw invalid(operation, "a null" + what);
		}
		String key = value.toString();
		if (key.isBlank()) {
			throw invalid(operation, "a blank" + what + " ('" + LogSafe.escape(key) + "')");
		}
		return key;
	}

	private static List<Object> arrayElements(Object array) {
		int length = Array.getLength(array);
		List<Object> elements = new ArrayList<>(length);
		for (int i = 0; i < length; i++) {
			elements.add(Array.get(array, i));
		}
		return elements;
	}

	private static InvalidLockKeyException invalid(LockOperation operation, String what) {
		return new InvalidLockKeyException(operation.description() + ": key expression \"" + operation.keySource()
				+ "\" evaluated to " + what + "; the method was not called");
	}

	/** The root object of key expressions: {@code #root.method}, {@code #root.args}, {@code #root.target}. */
	public record LockExpressionRoot(Method method, @Nullable Object[] args, @Nullable Object target, Class<?> targetClass) {

		public String methodName() {
			return this.method.getName();
		}

	}

}
